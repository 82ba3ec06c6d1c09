// Answers the webview's matrix requests from the ExplainResult the host keeps. Pure (no `vscode`), so the
// unit tests run it against real results.
import type { ExplainResult } from '../engine/result';
import type { MatrixKind } from '../engine/types';
import {
  toBuffer,
  type HeadsResponse,
  type OverviewResponse,
  type ProtocolToken,
  type RequestBody,
  type ResponseBody,
  type RowResponse,
  type SliceResponse,
} from '../protocol';

/** Throws a one-line Error for a request the result cannot answer (the webview shows it). */
export function answerRequest(result: ExplainResult, body: RequestBody): ResponseBody {
  switch (body.type) {
    case 'slice':
      return slice(result, body.layer, body.head, body.kind);
    case 'heads':
      return heads(result, body.layer, body.kind, body.maxSize);
    case 'overview':
      return overview(result, body.kind);
    case 'row':
      return row(result, body.layer, body.head, body.i);
  }
}

/** Matrix kinds the result can hand out, in display order. */
export function availableKinds(result: ExplainResult): MatrixKind[] {
  return (['c2c', 'c2p', 'p2c', 'scores', 'probs'] as MatrixKind[]).filter((k) => result.has(k));
}

export function protocolTokens(result: ExplainResult): ProtocolToken[] {
  return result.tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
}

function check(result: ExplainResult, layer: number, head: number | undefined, kind: MatrixKind): void {
  if (!result.layers.includes(layer)) throw new Error(`layer ${layer} is not in this result`);
  if (head !== undefined && (head < 0 || head >= result.heads)) throw new Error(`head ${head} is out of range`);
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
}

function slice(result: ExplainResult, layer: number, head: number, kind: MatrixKind): SliceResponse {
  check(result, layer, head, kind);
  return { type: 'slice', layer, head, kind, n: result.n, data: toBuffer(result.slice(layer, head, kind)) };
}

function heads(result: ExplainResult, layer: number, kind: MatrixKind, maxSize: number): HeadsResponse {
  check(result, layer, undefined, kind);
  const n = result.n;
  const size = Math.min(n, Math.max(1, Math.floor(maxSize)));
  const out = new Float32Array(result.heads * size * size);
  for (let h = 0; h < result.heads; h++) {
    downsampleInto(result.slice(layer, h, kind), n, size, out.subarray(h * size * size, (h + 1) * size * size));
  }
  return { type: 'heads', layer, kind, heads: result.heads, size, data: out.buffer };
}

/** Block-mean of an [n, n] matrix into [m, m] (m ≤ n); block edges follow floor(k·n/m). */
export function downsampleInto(src: Float32Array, n: number, m: number, dst: Float32Array): void {
  if (m === n) {
    dst.set(src);
    return;
  }
  const edge = (k: number) => Math.floor((k * n) / m);
  for (let bi = 0; bi < m; bi++) {
    const i0 = edge(bi);
    const i1 = edge(bi + 1);
    for (let bj = 0; bj < m; bj++) {
      const j0 = edge(bj);
      const j1 = edge(bj + 1);
      let s = 0;
      for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) s += src[i * n + j];
      dst[bi * m + bj] = s / ((i1 - i0) * (j1 - j0));
    }
  }
}

function overview(result: ExplainResult, kind: MatrixKind): OverviewResponse {
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
  const layers = result.layers;
  const H = result.heads;
  const n = result.n;
  const out = new Float32Array(layers.length * H);
  const metric = kind === 'probs' ? 'entropy' : 'mean-abs';
  layers.forEach((layer, li) => {
    for (let h = 0; h < H; h++) {
      const s = result.slice(layer, h, kind);
      out[li * H + h] = metric === 'entropy' ? meanRowEntropy(s, n) : meanAbs(s);
    }
  });
  return { type: 'overview', kind, metric, layers, heads: H, data: out.buffer };
}

export function meanRowEntropy(p: Float32Array, n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) {
    let e = 0;
    for (let j = 0; j < n; j++) {
      const v = p[i * n + j];
      if (v > 0) e -= v * Math.log(v);
    }
    total += e;
  }
  return n ? total / n : 0;
}

function meanAbs(s: Float32Array): number {
  let t = 0;
  for (let k = 0; k < s.length; k++) t += Math.abs(s[k]);
  return s.length ? t / s.length : 0;
}

function row(result: ExplainResult, layer: number, head: number, i: number): RowResponse {
  check(result, layer, head, 'probs');
  const n = result.n;
  if (i < 0 || i >= n) throw new Error(`token ${i} is out of range`);
  const rows: RowResponse['rows'] = {};
  for (const kind of availableKinds(result)) {
    rows[kind] = toBuffer(result.slice(layer, head, kind).subarray(i * n, (i + 1) * n));
  }
  return { type: 'row', layer, head, i, n, rows };
}
