import type { ModelSpec } from '../types';

type PositionSpec = Pick<ModelSpec, 'positionBuckets' | 'maxRelativePositions' | 'attSpan'>;

/**
 * β(δ): the relative distance δ = i − j mapped to a signed bucket (deberta-spec.md §5.3). With buckets, |δ| ≤ mid
 * is exact and larger distances share log-spaced buckets. HF evaluates the log branch in float32; float64 gives
 * identical buckets for every released geometry (spec §11.7), so Math.log with fround on the inputs is enough.
 * HF does not clamp δ to ±(M−1) first, and neither do we.
 */
export function relativeBucket(delta: number, spec: PositionSpec): number {
  const bk = spec.positionBuckets;
  if (!(bk > 0)) return delta;
  const mid = Math.floor(bk / 2);
  const abs = Math.abs(delta);
  if (abs <= mid) return delta;
  const f = Math.fround;
  const ratio = f(abs / mid);
  const denom = f(Math.log(f((spec.maxRelativePositions - 1) / mid)));
  const logPos = Math.ceil(f(f(f(Math.log(ratio)) / denom) * (mid - 1))) + mid;
  return Math.sign(delta) * logPos;
}

/** ι(i, j): the row of the relative table used by both c2p and p2c for query i and key j. */
export function positionIndex(i: number, j: number, spec: PositionSpec): number {
  const row = relativeBucket(i - j, spec) + spec.attSpan;
  return Math.min(Math.max(row, 0), 2 * spec.attSpan - 1);
}

/** ι over δ = i − j for δ ∈ [−(n−1), n−1], as an array indexed by δ + n − 1 (ι depends on i − j only). */
export function positionIndexByDelta(n: number, spec: PositionSpec): Int32Array {
  const out = new Int32Array(Math.max(2 * n - 1, 1));
  for (let k = 0; k < out.length; k++) out[k] = positionIndex(k - (n - 1), 0, spec);
  return out;
}
