// Hover maths: which keys a query attends to most, how strongly, and the numbers for one pair. Pure.
import { isRawTerm, MATRIX_KINDS, type MatrixKind } from './kinds';

export interface Neighbour {
  j: number;
  value: number;
  /** 0..1: |value| relative to the strongest of the top-k (drives opacity). */
  strength: number;
}

export interface SignedNeighbours {
  /** What the query attends to / what raises its score: the largest values (for raw terms, positive only). */
  top: Neighbour[];
  /** Raw terms only: what lowers the score most (the most negative values), strongest first. */
  negative: Neighbour[];
}

/**
 * Neighbours of query row `row` under `kind`. Probabilities and scores rank by value (what softmax favours);
 * a raw term's neighbours are what raises the score (top positive), and what lowers it comes apart, so that a
 * large negative c2p never reads as "strongest attention".
 */
export function neighbours(row: Float32Array, kind: MatrixKind, k: number, exclude?: (j: number) => boolean): SignedNeighbours {
  if (!isRawTerm(kind)) return { top: topK(row, k, false, exclude), negative: [] };
  const at = (j: number) => row[j] ?? NaN;
  const top = topK(row, k, false, (j) => !(at(j) > 0) || !!exclude?.(j));
  const negated = row.map((v) => -v);
  const negative = topK(negated, k, false, (j) => !(at(j) < 0) || !!exclude?.(j)).map((nb) => ({ ...nb, value: at(nb.j) }));
  return { top, negative };
}

/**
 * For every row of `values` (`[n, n]`), the cells `neighbours` would pick (its k strongest, and for a raw term its k
 * most negative as well), as `m` = k (or 2k) column indices a row (−1: none) and their values. A view that has only
 * a long input's picture rebuilds each row from them (`sparseRow`) and lights hover neighbours without the host.
 * Same picks, ties and all, as `neighbours`; one typed pass, as the host makes them for 3.8 M cells.
 */
export function rowTops(values: Float32Array, n: number, kind: MatrixKind, k: number): { m: number; idx: Int32Array; val: Float32Array } {
  const raw = isRawTerm(kind);
  const m = raw ? 2 * k : k;
  const idx = new Int32Array(n * m).fill(-1);
  const val = new Float32Array(n * m);
  const bestJ = new Int32Array(k);
  const bestV = new Float64Array(k);
  // One pass per side: keys v (the top) and, for raw terms, −v over the negative cells.
  const pick = (base: number, sign: 1 | -1, out: number) => {
    let count = 0;
    for (let j = 0; j < n; j++) {
      const v = values[base + j] ?? NaN;
      if (!Number.isFinite(v) || (raw && !(sign * v > 0))) continue;
      const key = sign * v;
      if (count === k && key <= (bestV[k - 1] ?? 0)) continue;
      // After every entry at least as strong: ties keep the lower index first.
      let pos = count < k ? count : k - 1;
      while (pos > 0 && (bestV[pos - 1] ?? 0) < key) {
        bestV[pos] = bestV[pos - 1] ?? 0;
        bestJ[pos] = bestJ[pos - 1] ?? 0;
        pos--;
      }
      bestV[pos] = key;
      bestJ[pos] = j;
      if (count < k) count++;
    }
    for (let t = 0; t < count; t++) {
      idx[out + t] = bestJ[t] ?? -1;
      val[out + t] = sign * (bestV[t] ?? 0);
    }
  };
  for (let i = 0; i < n; i++) {
    pick(i * n, 1, i * m);
    if (raw) pick(i * n, -1, i * m + k);
  }
  return { m, idx, val };
}

/** Row i rebuilt from `rowTops`: its picked cells, NaN elsewhere (which `neighbours` skips). */
export function sparseRow(tops: { m: number; idx: Int32Array; val: Float32Array }, n: number, i: number): Float32Array {
  const row = new Float32Array(n).fill(NaN);
  for (let t = i * tops.m; t < (i + 1) * tops.m; t++) {
    const j = tops.idx[t] ?? -1;
    if (j >= 0) row[j] = tops.val[t] ?? NaN;
  }
  return row;
}

/** Top-k entries of a row, strongest first (by value, or by |value|); ties keep the lower index first. Skips non-finite values. */
export function topK(row: Float32Array, k: number, byMagnitude: boolean, exclude?: (j: number) => boolean): Neighbour[] {
  const key = (v: number) => (byMagnitude ? Math.abs(v) : v);
  const picked: { j: number; value: number }[] = [];
  // Partial selection: k is small (≤ 16), n ≤ a few thousand, so an insertion-sorted list is cheapest.
  for (const [j, v] of row.entries()) {
    if (!Number.isFinite(v) || exclude?.(j)) continue;
    const kv = key(v);
    const last = picked[k - 1];
    if (picked.length === k && last && kv <= key(last.value)) continue;
    // After every entry at least as strong: ties keep the lower index first.
    const pos = picked.findIndex((p) => key(p.value) < kv);
    picked.splice(pos < 0 ? picked.length : pos, 0, { j, value: v });
    if (picked.length > k) picked.pop();
  }
  const first = picked[0]?.value;
  const rel = (v: number) => (byMagnitude ? Math.abs(v) : Math.max(0, v));
  const norm = first === undefined ? 0 : byMagnitude ? Math.abs(first) : Math.max(0, first);
  return picked.map(({ j, value }) => ({ j, value, strength: norm > 0 ? rel(value) / norm : 0 }));
}

/** Strength 0..1 → one of `buckets` decoration levels (1..buckets); 0 means "too weak to show". */
export function strengthBucket(strength: number, buckets: number): number {
  if (!(strength > 0)) return 0;
  return Math.max(1, Math.min(buckets, Math.ceil(strength * buckets)));
}

export interface PairValues {
  c2c?: number;
  c2p?: number;
  p2c?: number;
  scores?: number;
  probs?: number;
}

/** Values for the pair (i, j) from per-kind rows of query i. */
export function pairValues(rows: Partial<Record<MatrixKind, Float32Array>>, j: number): PairValues {
  const out: PairValues = {};
  for (const kind of MATRIX_KINDS) {
    const v = j >= 0 ? rows[kind]?.[j] : undefined;
    if (v !== undefined) out[kind] = v;
  }
  return out;
}

/** Heatmap geometry: the cell (i = row/query, j = column/key) under a point, or null outside. */
export function cellAt(x: number, y: number, size: number, n: number): { i: number; j: number } | null {
  if (n <= 0 || size <= 0 || x < 0 || y < 0 || x >= size || y >= size) return null;
  const cell = size / n;
  return { i: Math.min(n - 1, Math.floor(y / cell)), j: Math.min(n - 1, Math.floor(x / cell)) };
}

/** Keys of row i that share key j's relative-position table row (a log bucket), from the `[n, n]` table-row map. */
export function sharedBucket(rowOf: Float32Array, n: number, i: number, j: number): number[] {
  const r = rowOf[i * n + j];
  const out: number[] = [];
  for (let k = 0; k < n; k++) if (rowOf[i * n + k] === r) out.push(k);
  return out;
}

/** Relative-position table row and zone of every (query, key) pair (from the host's buckets answer). */
export interface BucketTable {
  n: number;
  rowOf: Float32Array;
  zoneOf: Float32Array;
  zones: string[];
}

/** δ = i − j, the relative-position table row it reads, and which other keys read the same row (a log bucket). */
export function distanceText(i: number, j: number, b: BucketTable | undefined): string {
  const d = `δ = i − j = ${i - j}`;
  if (!b) return d;
  const n = b.n;
  const row = b.rowOf[i * n + j];
  const z = b.zoneOf[i * n + j];
  const zone = (z === undefined ? undefined : b.zones[z]) ?? '';
  const shared = sharedBucket(b.rowOf, n, i, j);
  const others =
    shared.length > 1
      ? `; shares it with ${shared.length - 1} other key${shared.length > 2 ? 's' : ''} (#${shared[0]}–#${shared[shared.length - 1]}): their c2p/p2c position part is identical`
      : '';
  return `${d}: relative-position row ${row} (${zone === 'exact' ? 'exact distance' : zone === 'log' ? 'log bucket' : zone})${others}`;
}
