import type { ExplainResult } from './result';
import type { MatrixKind } from './types';

/** 9 significant digits round-trip any float32; shorter when the value allows. */
function num(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(9))) : 'null';
}

/**
 * The CLI's JSON (DESIGN.md §4), written in pieces so a 512-token, 12-layer result (hundreds of MB of text)
 * never has to exist as one string.
 */
export function writeResultJson(r: ExplainResult, write: (chunk: string) => void): void {
  const header = {
    model: r.model,
    text: r.text,
    input_ids: r.inputIds,
    tokens: r.tokens,
    scale: r.scale,
  };
  write(JSON.stringify(header).slice(0, -1));
  write(',"layers":[');
  const kinds: MatrixKind[] = [...r.terms, 'probs'];
  r.layers.forEach((layer, li) => {
    write(`${li ? ',' : ''}{"layer":${layer}`);
    for (const kind of kinds) {
      write(`,"${kind}":[`);
      const t = r.tensor(layer, kind);
      for (let h = 0; h < r.heads; h++) {
        write(h ? ',[' : '[');
        for (let i = 0; i < r.n; i++) {
          const row = t.subarray((h * r.n + i) * r.n, (h * r.n + i + 1) * r.n);
          let s = i ? ',[' : '[';
          for (let j = 0; j < row.length; j++) s += (j ? ',' : '') + num(row[j]);
          write(`${s}]`);
        }
        write(']');
      }
      write(']');
    }
    write('}');
  });
  write(']}\n');
}
