// The head atlas's statistics: per layer and head, sums and counts over every text of a corpus (so shards add up
// and a run resumes from what it wrote), and each head's strongest attention pairs. Per text, each (query, key) cell
// or each query row weighs the same:
//   c2c/c2p/p2c_share  mean over cells of |term| / Σ|terms| (the Term shares rule, ../term-shares.ts)
//   mean_distance      mean over rows of Σ_j p_ij·|i − j|      entropy   mean over rows of −Σ_j p_ij ln p_ij (nats)
//   special_mass       mean over rows of Σ_{j special} p_ij    max_prob  mean over rows of max_j p_ij
//   prev_token         mean over rows i ≥ 1 of p_{i,i−1}       next_token mean over rows i ≤ n−2 of p_{i,i+1}
//   top                the largest p_ij with neither token special, best first
// Sums are float64. Pure.
import type { TermName } from '../../engine/types';

/** Where a text's tokens are: its file and each token's [start, end) in that file's UTF-16 text. */
export interface TextPlace {
  file: string;
  starts: number[];
  ends: number[];
  special: boolean[];
}

export interface TopPair {
  file: string;
  query: [number, number];
  key: [number, number];
  prob: number;
}

/** What a head's statistics hold: sums and the counts they are divided by. Plain JSON (checkpoints, shards). */
export interface HeadSums {
  shares: Partial<Record<TermName, number>>;
  cells: number;
  distance: number;
  entropy: number;
  special: number;
  max: number;
  rows: number;
  prev: number;
  prevRows: number;
  next: number;
  nextRows: number;
  top: TopPair[];
}

export interface HeadMetrics {
  c2c_share?: number;
  c2p_share?: number;
  p2c_share?: number;
  mean_distance: number;
  entropy: number;
  special_mass: number;
  max_prob: number;
  prev_token: number;
  next_token: number;
}

export const emptySums = (terms: readonly TermName[]): HeadSums => ({
  shares: Object.fromEntries(terms.map((t) => [t, 0])),
  cells: 0,
  distance: 0,
  entropy: 0,
  special: 0,
  max: 0,
  rows: 0,
  prev: 0,
  prevRows: 0,
  next: 0,
  nextRows: 0,
  top: [],
});

/** Keeps `pair` among the `k` largest by prob (ties: the one met first stays ahead). */
function keepTop(top: TopPair[], pair: TopPair, k: number): void {
  if (top.length >= k && pair.prob <= top[top.length - 1]!.prob) return;
  let at = top.length;
  while (at > 0 && top[at - 1]!.prob < pair.prob) at--;
  top.splice(at, 0, pair);
  if (top.length > k) top.pop();
}

/**
 * Adds one head of one text: `terms` its raw terms and `probs` its softmax, each [n, n] row-major (a view into a
 * layer's [H, n, n] is fine).
 */
export function addHead(
  s: HeadSums,
  terms: Partial<Record<TermName, Float32Array>>,
  probs: Float32Array,
  n: number,
  place: TextPlace,
  topK: number,
): void {
  // The Term shares rule (../term-shares.ts cellShares), summed in one pass without a share array per term.
  const present = (Object.keys(s.shares) as TermName[]).map((t) => terms[t]!);
  const sums = new Float64Array(present.length);
  for (let k = 0; k < n * n; k++) {
    let total = 0;
    for (const m of present) total += Math.abs(m[k]!);
    if (total > 0) for (let t = 0; t < present.length; t++) sums[t]! += Math.abs(present[t]![k]!) / total;
    else for (let t = 0; t < present.length; t++) sums[t]! += 1 / present.length;
  }
  (Object.keys(s.shares) as TermName[]).forEach((t, k) => (s.shares[t]! += sums[k]!));
  s.cells += n * n;
  // The K-th best so far: a cell below it cannot enter the list, so most cells cost one comparison.
  let floor = s.top.length >= topK ? s.top[s.top.length - 1]!.prob : -Infinity;
  for (let i = 0; i < n; i++) {
    const row = probs.subarray(i * n, (i + 1) * n);
    let dist = 0,
      ent = 0,
      special = 0,
      max = 0;
    for (let j = 0; j < n; j++) {
      const p = row[j]!;
      dist += p * Math.abs(i - j);
      if (p > 0) ent -= p * Math.log(p);
      if (place.special[j]) special += p;
      if (p > max) max = p;
      if (p > floor && !place.special[i] && !place.special[j]) {
        keepTop(
          s.top,
          { file: place.file, query: [place.starts[i]!, place.ends[i]!], key: [place.starts[j]!, place.ends[j]!], prob: p },
          topK,
        );
        if (s.top.length >= topK) floor = s.top[s.top.length - 1]!.prob;
      }
    }
    s.distance += dist;
    s.entropy += ent;
    s.special += special;
    s.max += max;
    if (i >= 1) {
      s.prev += row[i - 1]!;
      s.prevRows++;
    }
    if (i <= n - 2) {
      s.next += row[i + 1]!;
      s.nextRows++;
    }
  }
  s.rows += n;
}

/** Two heads' sums as one (shards of a corpus): sums add, the top lists merge. */
export function mergeSums(a: HeadSums, b: HeadSums, topK: number): HeadSums {
  const out: HeadSums = {
    ...a,
    shares: { ...a.shares },
    top: [...a.top],
  };
  for (const t of Object.keys(b.shares) as TermName[]) out.shares[t] = (out.shares[t] ?? 0) + b.shares[t]!;
  for (const key of ['cells', 'distance', 'entropy', 'special', 'max', 'rows', 'prev', 'prevRows', 'next', 'nextRows'] as const)
    out[key] = a[key] + b[key];
  for (const p of b.top) keepTop(out.top, p, topK);
  return out;
}

const mean = (sum: number, count: number) => (count > 0 ? sum / count : NaN);

export function headMetrics(s: HeadSums): HeadMetrics {
  const shares = Object.fromEntries(Object.entries(s.shares).map(([t, v]) => [`${t}_share`, mean(v, s.cells)]));
  return {
    ...shares,
    mean_distance: mean(s.distance, s.rows),
    entropy: mean(s.entropy, s.rows),
    special_mass: mean(s.special, s.rows),
    max_prob: mean(s.max, s.rows),
    prev_token: mean(s.prev, s.prevRows),
    next_token: mean(s.next, s.nextRows),
  };
}
