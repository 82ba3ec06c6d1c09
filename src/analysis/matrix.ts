// Shape checks and small row operations shared by the analysis functions. Matrices are row-major float32:
// `[n,n]` for one head, `[H,n,n]` for a layer (heads stacked), always square in the last two axes.
import { LensError } from '../engine/errors';
import type { ModelSpec } from '../engine/types';

/** The part of ModelSpec that fixes β and ι (what `relative-position.ts` reads). */
export type PositionSpec = Pick<ModelSpec, 'positionBuckets' | 'maxRelativePositions' | 'attSpan'>;

/** Number of `[n,n]` blocks in `m`; throws when `m` is not `[k,n,n]` for a whole k ≥ 1. */
export function blockCount(m: ArrayLike<number>, n: number, what = 'matrix'): number {
  if (!Number.isInteger(n) || n < 1) throw new LensError(`analysis: token count n must be a positive integer, got ${n}`);
  const nn = n * n;
  if (m.length === 0 || m.length % nn !== 0) {
    throw new LensError(
      `analysis: ${what} has ${m.length} values, not a whole number of [${n},${n}] blocks; pass [n,n] or [H,n,n] row-major`,
    );
  }
  return m.length / nn;
}

/** Throws unless every matrix has the same length as the first. */
export function sameLength(ms: readonly ArrayLike<number>[], what: string): void {
  const [head] = ms;
  for (const m of ms) {
    if (m.length !== head?.length) throw new LensError(`analysis: ${what} differ in size (${head?.length} vs ${m.length} values)`);
  }
}

/** Throws unless 0 ≤ i < n (an index a view passed in). */
export function checkIndex(i: number, n: number, what: string): void {
  if (!Number.isInteger(i) || i < 0 || i >= n) throw new LensError(`analysis: ${what} ${i} is out of range 0..${n - 1}`);
}

/**
 * Softmax of `scores[offset … offset+n)` into `out` (same offsets), with the mask convention of current HF
 * (deberta-spec.md §5.7): keys with keyMask 0 get exactly 0; a padding query row (queryReal false) is uniform 1/n.
 * Computed in float64 with the row maximum subtracted. Returns log Σ exp over the unmasked keys (for log-probs).
 */
export function maskedSoftmaxRow(
  scores: ArrayLike<number>,
  offset: number,
  n: number,
  out: Float32Array,
  keyMask: ArrayLike<number> | undefined,
  queryReal: boolean,
): number {
  if (!queryReal) {
    for (let j = 0; j < n; j++) out[offset + j] = 1 / n;
    return Math.log(n);
  }
  let max = -Infinity;
  for (let j = 0; j < n; j++) if (!keyMask || keyMask[j]) max = Math.max(max, scores[offset + j]!);
  if (max === -Infinity) {
    // No real key at all: HF fills every entry with the same minimum, so the row is uniform.
    for (let j = 0; j < n; j++) out[offset + j] = 1 / n;
    return Math.log(n);
  }
  let sum = 0;
  for (let j = 0; j < n; j++) if (!keyMask || keyMask[j]) sum += Math.exp(scores[offset + j]! - max);
  for (let j = 0; j < n; j++) out[offset + j] = !keyMask || keyMask[j] ? Math.exp(scores[offset + j]! - max) / sum : 0;
  return max + Math.log(sum);
}
