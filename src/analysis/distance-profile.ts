// Relative-distance profiles: any [n,n] matrix (c2p, p2c, probs, …) collapsed onto δ = i − j (query minus key,
// the spec's sign: δ > 0 means the key is to the left), or onto the relative-table row ι(δ) that c2p and p2c
// actually read. β and ι come from the engine's relative-position.ts, never re-derived here.
import { positionIndexByDelta } from '../engine/graph/relative-position';
import { LensError } from '../engine/errors';
import { blockCount, checkIndex, type PositionSpec } from './matrix';

/** Statistics per δ ∈ [−(n−1), n−1], arrays indexed by δ + n − 1. */
export interface DistanceProfile {
  /** The δ of each entry: deltas[k] = k − (n − 1). */
  deltas: Int32Array;
  count: Int32Array;
  /** Mean over the cells with this δ (NaN where count is 0). */
  mean: Float64Array;
  /** Population standard deviation (0 for a single cell, NaN where count is 0). */
  std: Float64Array;
  /** δ with the largest mean among distances with at least a quarter of the main diagonal's cells (a far δ
   *  averages only a handful of pairs and would otherwise win by noise); ties go to the smaller |δ|, then to the
   *  negative δ. */
  peakDelta: number;
}

function finish(deltas: Int32Array, count: Int32Array, sum: Float64Array, sumSq: Float64Array): DistanceProfile {
  const mean = new Float64Array(count.length);
  const std = new Float64Array(count.length);
  let peak = NaN;
  let best = -Infinity;
  const minCount = Math.ceil(Math.max(...count) / 4);
  for (let k = 0; k < count.length; k++) {
    if (count[k] === 0) {
      mean[k] = NaN;
      std[k] = NaN;
      continue;
    }
    mean[k] = sum[k]! / count[k]!;
    std[k] = Math.sqrt(Math.max(sumSq[k]! / count[k]! - mean[k]! * mean[k]!, 0));
    const d = deltas[k]!;
    if (count[k]! < minCount) continue;
    if (mean[k]! > best || (mean[k] === best && (Math.abs(d) < Math.abs(peak) || (Math.abs(d) === Math.abs(peak) && d < peak)))) {
      best = mean[k]!;
      peak = d;
    }
  }
  return { deltas, count, mean, std, peakDelta: peak };
}

/**
 * Collapse one head's `[n,n]` matrix onto δ. With `query`, only that query row is used (then each δ has at most
 * one cell). `matrix` may also be `[H,n,n]` with `head` choosing the block.
 */
export function distanceProfile(matrix: Float32Array, n: number, opts: { head?: number; query?: number } = {}): DistanceProfile {
  const heads = blockCount(matrix, n);
  const head = opts.head ?? 0;
  checkIndex(head, heads, 'head');
  if (opts.query !== undefined) checkIndex(opts.query, n, 'query token');
  const size = 2 * n - 1;
  const deltas = new Int32Array(size).map((_, k) => k - (n - 1));
  const count = new Int32Array(size);
  const sum = new Float64Array(size);
  const sumSq = new Float64Array(size);
  const base = head * n * n;
  const i0 = opts.query ?? 0;
  const i1 = opts.query !== undefined ? opts.query + 1 : n;
  for (let i = i0; i < i1; i++) {
    for (let j = 0; j < n; j++) {
      const k = i - j + n - 1;
      const v = matrix[base + i * n + j]!;
      count[k]!++;
      sum[k]! += v;
      sumSq[k]! += v * v;
    }
  }
  return finish(deltas, count, sum, sumSq);
}

/** Statistics per relative-table row ι, for the rows this sequence length reaches (ascending). */
export interface RowProfile {
  rows: Int32Array;
  /** The distinct δ that map to each row (within this sequence). */
  deltas: number[][];
  count: Int32Array;
  mean: Float64Array;
  std: Float64Array;
  /** Row with the largest mean (ties: the lower row). */
  peakRow: number;
}

/** Collapse one head's matrix onto the table row ι(i − j), i.e. onto β buckets: distances sharing a bucket pool. */
export function rowProfile(matrix: Float32Array, n: number, spec: PositionSpec, opts: { head?: number; query?: number } = {}): RowProfile {
  const byDelta = distanceProfile(matrix, n, opts);
  const iota = positionIndexByDelta(n, spec);
  const rowsUsed = [...new Set(iota)].sort((a, b) => a - b);
  const slot = new Map(rowsUsed.map((r, s) => [r, s]));
  const m = rowsUsed.length;
  const count = new Int32Array(m);
  const sum = new Float64Array(m);
  const sumSq = new Float64Array(m);
  const deltas: number[][] = rowsUsed.map(() => []);
  for (let k = 0; k < iota.length; k++) {
    const s = slot.get(iota[k]!)!;
    deltas[s]!.push(k - (n - 1)); // s is a slot of rowsUsed
    const c = byDelta.count[k]!;
    if (c === 0) continue;
    count[s]! += c;
    sum[s]! += byDelta.mean[k]! * c;
    sumSq[s]! += (byDelta.std[k]! ** 2 + byDelta.mean[k]! ** 2) * c;
  }
  const mean = new Float64Array(m);
  const std = new Float64Array(m);
  let peakRow = NaN;
  let best = -Infinity;
  for (let s = 0; s < m; s++) {
    mean[s] = count[s] ? sum[s]! / count[s]! : NaN;
    std[s] = count[s] ? Math.sqrt(Math.max(sumSq[s]! / count[s]! - mean[s]! ** 2, 0)) : NaN;
    if (count[s] && mean[s]! > best) {
      best = mean[s]!;
      peakRow = rowsUsed[s]!;
    }
  }
  return { rows: Int32Array.from(rowsUsed), deltas, count, mean, std, peakRow };
}

/**
 * A query (or key) vector against every row of one head's relative table: out[r] = vec · table[r], for a
 * `[rows, d]` row-major table. With the layer's PK and a query vector q_i this is q_i's c2p preference for every
 * relative position the model can express, not only those inside the current sequence; with PQ and a key vector
 * k_j it is the p2c counterpart. Raw (unscaled), like the terms.
 */
export function tableRowScores(table: Float32Array, d: number, vec: Float32Array): Float32Array {
  if (!Number.isInteger(d) || d < 1 || table.length % d !== 0) {
    throw new LensError(`analysis: the relative table has ${table.length} values, not a whole number of rows of width ${d}`);
  }
  if (vec.length !== d) throw new LensError(`analysis: the vector has ${vec.length} values but table rows have ${d}`);
  const rows = table.length / d;
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    for (let c = 0; c < d; c++) acc += vec[c]! * table[r * d + c]!;
    out[r] = acc;
  }
  return out;
}

/** For a table with 2S rows: the δ range (within ±maxDelta) reading each row, or null for rows none reach. */
export function rowDeltaRanges(spec: PositionSpec, maxDelta: number): ({ min: number; max: number } | null)[] {
  const out: ({ min: number; max: number } | null)[] = new Array<{ min: number; max: number } | null>(2 * spec.attSpan).fill(null);
  const iota = positionIndexByDelta(maxDelta + 1, spec);
  for (let k = 0; k < iota.length; k++) {
    const delta = k - maxDelta;
    const r = out[iota[k]!];
    out[iota[k]!] = r ? { min: Math.min(r.min, delta), max: Math.max(r.max, delta) } : { min: delta, max: delta };
  }
  return out;
}
