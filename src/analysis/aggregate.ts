// Aggregation over heads and layers, span rows, and discounting special tokens.
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import type { MatrixKind } from '../engine/types';
import { blockCount, checkIndex, sameLength } from './matrix';

export type ReduceOp = 'mean' | 'max';

/** Element-wise mean or max over equal-size matrices. */
export function reduceMatrices(mats: readonly Float32Array[], op: ReduceOp): Float32Array {
  const [head, ...rest] = mats;
  if (!head) throw new LensError('analysis: nothing to aggregate (no layer or head selected)');
  sameLength(mats, 'matrices to aggregate');
  const out = Float32Array.from(head);
  for (const x of rest) {
    if (op === 'max') for (let k = 0; k < out.length; k++) out[k] = Math.max(out[k]!, x[k]!);
    else for (let k = 0; k < out.length; k++) out[k]! += x[k]!;
  }
  if (op === 'mean') for (let k = 0; k < out.length; k++) out[k]! /= mats.length;
  return out;
}

/** `[H,n,n]` → `[n,n]`: mean or max over heads. */
export function reduceHeads(tensor: Float32Array, n: number, op: ReduceOp): Float32Array {
  const H = blockCount(tensor, n);
  const nn = n * n;
  return reduceMatrices(
    Array.from({ length: H }, (_, h) => tensor.subarray(h * nn, (h + 1) * nn)),
    op,
  );
}

/**
 * `[n,n]` over the chosen layers and heads of a result (default: all), one op over every (layer, head) slice,
 * so mean-of-means and max-of-max agree with a single pass. Streams: one layer in memory at a time.
 */
export async function aggregate(
  result: ExplainResult,
  kind: MatrixKind,
  op: ReduceOp,
  select: { layers?: number[]; heads?: number[] } = {},
): Promise<Float32Array> {
  const layers = select.layers ?? result.layers;
  const heads = select.heads ?? Array.from({ length: result.heads }, (_, h) => h);
  for (const l of layers) {
    if (!result.layers.includes(l)) throw new LensError(`analysis: layer ${l} is not in this result (have ${result.layers.join(',')})`);
  }
  for (const h of heads) checkIndex(h, result.heads, 'head');
  if (layers.length === 0 || heads.length === 0) throw new LensError('analysis: nothing to aggregate (no layer or head selected)');
  // The same operations in the same order as reduceMatrices over every slice.
  let out: Float32Array | undefined;
  for (const l of layers) {
    await result.load(l);
    for (const h of heads) {
      const x = result.slice(l, h, kind);
      if (!out) out = Float32Array.from(x);
      else if (op === 'max') for (let k = 0; k < out.length; k++) out[k] = Math.max(out[k]!, x[k]!);
      else for (let k = 0; k < out.length; k++) out[k]! += x[k]!;
    }
  }
  const count = layers.length * heads.length;
  if (op === 'mean') for (let k = 0; k < out!.length; k++) out![k]! /= count;
  return out!;
}

/** One row `[n]` from several query rows of an `[n,n]` matrix: their sum or mean (a selected span of text). */
export function spanRows(matrix: Float32Array, n: number, rows: readonly number[], op: 'sum' | 'mean'): Float32Array {
  blockCount(matrix, n);
  if (rows.length === 0) throw new LensError('analysis: the span selects no query token; select some text first');
  const out = new Float32Array(n);
  for (const i of rows) {
    checkIndex(i, n, 'query token');
    for (let j = 0; j < n; j++) out[j]! += matrix[i * n + j]!;
  }
  if (op === 'mean') for (let j = 0; j < n; j++) out[j]! /= rows.length;
  return out;
}

/** Query rows whose token overlaps [start, end) of the source text (empty selection: the token containing start). */
export function tokensInRange(tokens: readonly { start: number; end: number; special: boolean }[], start: number, end: number): number[] {
  const out: number[] = [];
  tokens.forEach((t, i) => {
    if (t.special) return;
    const hit = end > start ? t.start < end && t.end > start : t.start <= start && start < t.end;
    if (hit) out.push(i);
  });
  return out;
}

/**
 * Special tokens ([CLS], [SEP]) often soak up attention that says little. Discounting zeroes their key columns
 * and renormalises each row to sum to 1 over the remaining keys; a row with no mass left stays all zero (never
 * NaN). Works on `[n,n]`, `[H,n,n]` or one `[n]` row (rows of length n). Use it on probabilities only.
 */
export function discountSpecialColumns(matrix: Float32Array, n: number, special: readonly boolean[]): Float32Array {
  if (special.length !== n) throw new LensError(`analysis: special-token flags have ${special.length} entries for ${n} tokens`);
  if (matrix.length % n !== 0) throw new LensError(`analysis: matrix has ${matrix.length} values, not rows of ${n}`);
  const out = Float32Array.from(matrix);
  for (let r = 0; r < out.length / n; r++) {
    let s = 0;
    for (let j = 0; j < n; j++) {
      if (special[j]) out[r * n + j] = 0;
      else s += out[r * n + j]!;
    }
    if (s > 0) for (let j = 0; j < n; j++) out[r * n + j]! /= s;
  }
  return out;
}
