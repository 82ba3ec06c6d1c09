import type { ModelSpec } from '../types';
import { InputName } from './deberta-io';
import { positionIndex } from './relative-position';

export type Int64Feeds = Record<string, BigInt64Array>;

/**
 * The index inputs of the forward graph for one sequence of n tokens (see deberta-graph.ts).
 * Columns k ∈ [0, 2n) of the c2p product hold distance δ = n−1−k; those of the p2c product hold δ = k−(n−1).
 * With that layout the skew out[r, c] = C[r, n−1−r+c] yields c2p[i, j] (r=i, c=j) and p2cᵀ[j, i] (r=j, c=i),
 * both at distance δ = i − j; the one extra column (δ = −n or +n) is never read.
 */
export function graphInputs(spec: ModelSpec, ids: number[], tokenTypes?: number[]): Int64Feeds {
  const n = ids.length;
  const feeds: Int64Feeds = { [InputName.ids]: BigInt64Array.from(ids, BigInt) };
  if (spec.positionBiasedInput) feeds[InputName.positions] = BigInt64Array.from({ length: n }, (_, i) => BigInt(i));
  if (spec.typeVocabSize > 0) feeds[InputName.tokenTypes] = BigInt64Array.from(tokenTypes ?? new Array(n).fill(0), BigInt);
  return { ...feeds, ...relativeInputs(spec, n, true) };
}

/**
 * The pick and skew inputs for n tokens (any number of heads); with `withRows`, the table rows too. The picks
 * index the rows this input uses (`rel_rows`), or with `tableRows` the whole relative table (the layer graph,
 * which is fed the projected table).
 */
export function relativeInputs(spec: ModelSpec, n: number, withRows = false, tableRows = false): Int64Feeds {
  const feeds: Int64Feeds = {};
  if (!(spec.relativeAttention && spec.posAttType.length > 0)) return feeds;
  const rowOfDelta = (delta: number) => positionIndex(delta, 0, spec);
  const c2pRows = Array.from({ length: 2 * n }, (_, k) => rowOfDelta(n - 1 - k));
  const p2cRows = Array.from({ length: 2 * n }, (_, k) => rowOfDelta(k - (n - 1)));
  const distinct = [...new Set([...c2pRows, ...p2cRows])].sort((a, b) => a - b);
  const slot = new Map(distinct.map((r, k) => [r, tableRows ? r : k]));
  if (withRows) feeds[InputName.relRows] = BigInt64Array.from(distinct, BigInt);
  if (spec.posAttType.includes('c2p')) feeds[InputName.c2pPick] = BigInt64Array.from(c2pRows, (r) => BigInt(slot.get(r)!));
  if (spec.posAttType.includes('p2c')) feeds[InputName.p2cPick] = BigInt64Array.from(p2cRows, (r) => BigInt(slot.get(r)!));
  feeds[InputName.skewStart] = BigInt64Array.of(BigInt(n - 1));
  feeds[InputName.skewEnd] = BigInt64Array.of(BigInt(n - 1 + n * (2 * n - 1)));
  // −1 heads: the skew works on any group of heads (the forward graph runs heads in groups, the layer graph a range).
  feeds[InputName.skewShape] = BigInt64Array.of(-1n, BigInt(n), BigInt(2 * n - 1));
  feeds[InputName.n] = BigInt64Array.of(BigInt(n));
  return feeds;
}
