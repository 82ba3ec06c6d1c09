// The CLI's JSON (DESIGN.md §4) plus `text`, the model's name and checkpoint_hash, and token offsets.
// Numbers are written with the fewest digits that read back as the same float32, and the text is produced in
// chunks so a large result can be streamed to a file instead of being built as one string (V8 caps strings
// at ~512 MiB; v3-base at 512 tokens is ~0.4 GiB of float32, several GiB as JSON).
import type { ExplainResult } from '../../engine/result/explain-result';
import { DECOMPOSITION_TERMS } from '../../shared/kinds';
import { TERM_NAMES, type MatrixKind } from '../../engine/types';

/** Shortest decimal that rounds back to the same float32. NaN/±Infinity have no JSON form: null. */
export function float32ForJson(x: number): number | null {
  if (!Number.isFinite(x)) return null;
  for (let p = 6; p < 9; p++) {
    const v = Number(x.toPrecision(p));
    if (Math.fround(v) === x) return v;
  }
  return Number(x.toPrecision(9));
}

function isBert(result: ExplainResult): boolean {
  return result.model.architecture === 'bert';
}

function kindsOf(result: ExplainResult): MatrixKind[] {
  // BERT's score is one q·k product (its terms exist for layer 0 only, in layer0_decomposition).
  if (isBert(result)) return ['scores', 'probs'];
  // §4's order: c2c, c2p, p2c (those present), probs.
  return [...TERM_NAMES.filter((t) => result.has(t)), 'probs'];
}

function header(result: ExplainResult) {
  const m = result.model;
  return {
    // DeBERTa's JSON keeps DESIGN §4's shape; a BERT result says what it is.
    ...(m.architecture === 'bert' ? { architecture: 'bert' } : {}),
    model: {
      path: m.path,
      name: m.name,
      type: m.type,
      layers: m.layers,
      heads: m.heads,
      head_dim: m.head_dim,
      terms: m.terms,
      execution_provider: m.execution_provider,
      checkpoint_hash: m.checkpoint_hash,
    },
    ...(result.text !== undefined ? { text: result.text } : {}),
    ...(result.pair !== undefined ? { text_pair: result.pair } : {}),
    input_ids: result.inputIds,
    ...(result.tokenTypeIds ? { token_type_ids: result.tokenTypeIds } : {}),
    tokens: result.tokens.map((t) => ({ id: t.id, text: t.text, start: t.start, end: t.end, special: t.special })),
    scale: result.scale,
  };
}

function nested(t: Float32Array, heads: number, n: number): (number | null)[][][] {
  const out: (number | null)[][][] = [];
  for (let h = 0; h < heads; h++) {
    const rows: (number | null)[][] = [];
    for (let i = 0; i < n; i++) {
      const row = new Array<number | null>(n);
      for (let j = 0; j < n; j++) row[j] = float32ForJson(t[(h * n + i) * n + j]!);
      rows.push(row);
    }
    out.push(rows);
  }
  return out;
}

/** The JSON object (for results small enough to hold as JS arrays). */
export async function toJson(result: ExplainResult): Promise<Record<string, unknown>> {
  const layers: Record<string, unknown>[] = [];
  for (const layer of result.layers) {
    await result.load(layer);
    const o: Record<string, unknown> = { layer };
    for (const k of kindsOf(result)) o[k] = nested(result.tensor(layer, k), result.heads, result.n);
    layers.push(o);
  }
  const out: Record<string, unknown> = { ...header(result), layers };
  if (result.hasDecomposition) {
    const d = await result.layer0Decomposition();
    out.layer0_decomposition = Object.fromEntries(DECOMPOSITION_TERMS.map((k) => [k, nested(d[k], result.heads, result.n)]));
  }
  return out;
}

/** The same JSON as text, one chunk per matrix row, computing one layer at a time; join or stream the chunks. */
/** `extra`: fields written after the header (the panel adds the decision and the occlusion scores it shows). */
export async function* jsonChunks(result: ExplainResult, extra: Record<string, unknown> = {}): AsyncGenerator<string> {
  const head = JSON.stringify({ ...header(result), ...extra });
  yield head.slice(0, -1) + ',"layers":[';
  const { n, heads } = result;
  const layers = result.layers;
  for (let li = 0; li < layers.length; li++) {
    await result.load(layers[li]!);
    yield `${li ? ',' : ''}{"layer":${layers[li]}`;
    for (const k of kindsOf(result)) yield* matrixChunks(k, result.tensor(layers[li]!, k), heads, n);
    yield '}';
  }
  yield ']';
  if (result.hasDecomposition) {
    const d = await result.layer0Decomposition();
    yield ',"layer0_decomposition":{';
    for (const [k, name] of DECOMPOSITION_TERMS.entries()) yield* matrixChunks(name, d[name], heads, n, k === 0 ? '' : ',');
    yield '}';
  }
  yield '}';
}

/** `"name":[…]`, [heads][n][n], one chunk per row. */
function* matrixChunks(name: string, t: Float32Array, heads: number, n: number, lead = ','): Generator<string> {
  yield `${lead}"${name}":[`;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      const row = new Array<string>(n);
      for (let j = 0; j < n; j++) row[j] = String(float32ForJson(t[(h * n + i) * n + j]!));
      yield `${i === 0 ? (h ? ',[' : '[') : ','}[${row.join(',')}]${i === n - 1 ? ']' : ''}`;
    }
  }
  yield ']';
}

export async function toJsonText(result: ExplainResult): Promise<string> {
  const parts: string[] = [];
  for await (const c of jsonChunks(result)) parts.push(c);
  return parts.join('');
}
