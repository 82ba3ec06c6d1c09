// Bucket lens: for a sequence of n tokens, which query/key pairs see their exact distance and which share a
// relative-table row with other distances (log buckets, or the clamp at the span's edge).
import { positionIndexByDelta, relativeBucket } from '../engine/graph/relative-position';
import { LensError } from '../engine/errors';
import type { PositionSpec } from './matrix';

/**
 * 'exact': |δ| ≤ mid (β(δ) = δ, one row per distance); 'log': |δ| > mid, a log-spaced bucket that may pool
 * several distances (see `deltas`); 'clamped': β + S fell outside [0, 2S) and was clamped to the first or
 * last row. Without buckets every in-span distance is exact and only the clamp pools.
 */
export type BucketZone = 'exact' | 'log' | 'clamped';
const ZONES: readonly BucketZone[] = ['exact', 'log', 'clamped'];

export interface BucketGroup {
  /** The relative-table row ι. */
  row: number;
  zone: BucketZone;
  /** Distinct δ = i − j (within this sequence) that read this row, ascending. */
  deltas: number[];
  /** Number of (i, j) pairs that read this row. */
  pairs: number;
}

export interface BucketLens {
  n: number;
  /** ⌊Bk/2⌋ with buckets; the span S without (every in-span distance is exact). */
  mid: number;
  /** `[n,n]` zone code per pair: index into `zones`. */
  zoneOf: Uint8Array;
  zones: readonly BucketZone[];
  /** `[n,n]` table row ι per pair. */
  rowOf: Int32Array;
  /** One entry per row used, ascending by row. */
  groups: BucketGroup[];
}

export function bucketLens(n: number, spec: PositionSpec): BucketLens {
  if (!Number.isInteger(n) || n < 1) throw new LensError(`analysis: token count n must be a positive integer, got ${n}`);
  const S = spec.attSpan;
  const bucketed = spec.positionBuckets > 0;
  const mid = bucketed ? Math.floor(spec.positionBuckets / 2) : S;
  const iota = positionIndexByDelta(n, spec);
  const zoneByDelta = new Uint8Array(iota.length);
  for (let k = 0; k < iota.length; k++) {
    const delta = k - (n - 1);
    const row = relativeBucket(delta, spec) + S;
    if (row < 0 || row > 2 * S - 1) zoneByDelta[k] = 2;
    else zoneByDelta[k] = bucketed && Math.abs(delta) > mid ? 1 : 0;
  }
  const zoneOf = new Uint8Array(n * n);
  const rowOf = new Int32Array(n * n);
  const groups = new Map<number, BucketGroup>();
  for (let k = 0; k < iota.length; k++) {
    const delta = k - (n - 1);
    const pairs = n - Math.abs(delta);
    const g = groups.get(iota[k]!);
    if (g) {
      g.deltas.push(delta);
      g.pairs += pairs;
      // A clamped edge row may also be reached exactly by an in-range distance: call the row clamped.
      if (zoneByDelta[k] === 2) g.zone = 'clamped';
    } else {
      groups.set(iota[k]!, { row: iota[k]!, zone: ZONES[zoneByDelta[k]!]!, deltas: [delta], pairs });
    }
  }
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const k = i - j + n - 1;
      zoneOf[i * n + j] = zoneByDelta[k]!;
      rowOf[i * n + j] = iota[k]!;
    }
  }
  return { n, mid, zoneOf, zones: ZONES, rowOf, groups: [...groups.values()].sort((a, b) => a.row - b.row) };
}
