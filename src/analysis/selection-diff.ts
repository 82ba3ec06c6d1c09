// Compare two results (before/after an edit, or two selections): match tokens by an LCS over their piece
// texts (order kept), then take per-pair differences of any matrix for the matched tokens.
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import type { MatrixKind } from '../engine/types';

export interface TokenMatch {
  /** Matched pairs [indexInA, indexInB], ascending in both. */
  pairs: [number, number][];
  /** Tokens of A / B with no partner (deleted / inserted). */
  onlyA: number[];
  onlyB: number[];
}

/**
 * Longest common subsequence over the piece texts. Among equally long matchings the one that pairs tokens as
 * early as possible in A is chosen, so the result is deterministic. O(|A|·|B|) time and memory (Int32).
 */
export function matchTokens(a: readonly { text: string }[], b: readonly { text: string }[]): TokenMatch {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > 64e6) throw new LensError(`analysis: ${n}×${m} tokens is too many to match; diff shorter selections`);
  // suf[i][j] = LCS length of a[i:], b[j:]. Walking forward, a tie skips the B token, so A's tokens are
  // paired as early as possible.
  const w = m + 1;
  const suf = new Int32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      suf[i * w + j] = a[i]!.text === b[j]!.text ? suf[(i + 1) * w + j + 1]! + 1 : Math.max(suf[(i + 1) * w + j]!, suf[i * w + j + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  const onlyA: number[] = [];
  const onlyB: number[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i]!.text === b[j]!.text && suf[i * w + j] === suf[(i + 1) * w + j + 1]! + 1) {
      pairs.push([i++, j++]);
    } else if (suf[(i + 1) * w + j]! > suf[i * w + j + 1]!) {
      onlyA.push(i++);
    } else {
      onlyB.push(j++);
    }
  }
  while (i < n) onlyA.push(i++);
  while (j < m) onlyB.push(j++);
  return { pairs, onlyA, onlyB };
}

/**
 * For matched pairs p, q: diff[p,q] = B[bp, bq] − A[ap, aq], `[P,P]` for one `[nA,nA]` / `[nB,nB]` slice each.
 */
export function diffMatched(a: Float32Array, nA: number, b: Float32Array, nB: number, pairs: readonly [number, number][]): Float32Array {
  if (a.length !== nA * nA || b.length !== nB * nB)
    throw new LensError(`analysis: diff needs one [n,n] slice per side (got ${a.length} and ${b.length} values)`);
  const P = pairs.length;
  const out = new Float32Array(P * P);
  for (const [p, [ap, bp]] of pairs.entries()) {
    for (const [q, [aq, bq]] of pairs.entries()) out[p * P + q] = b[bp * nB + bq]! - a[ap * nA + aq]!;
  }
  return out;
}

export interface SelectionDiff extends TokenMatch {
  /** `[H,P,P]`: B − A for every head of the layer, over matched tokens. */
  diff: Float32Array;
  heads: number;
}

/** Per-head difference of one layer and kind between two results of the same model. */
export async function diffResults(a: ExplainResult, b: ExplainResult, layer: number, kind: MatrixKind): Promise<SelectionDiff> {
  if (a.heads !== b.heads || a.model.layers !== b.model.layers) {
    throw new LensError(
      `analysis: the two results come from different model shapes (${a.model.name} vs ${b.model.name}); diff results of one model`,
    );
  }
  if (!a.has(kind) || !b.has(kind)) throw new LensError(`analysis: ${kind} is not in both results; pick another term`);
  const match = matchTokens(a.tokens, b.tokens);
  // Held here so that neither layer can be dropped while the other loads.
  const held = [await a.load(layer), await b.load(layer)];
  const P = match.pairs.length;
  const diff = new Float32Array(a.heads * P * P);
  for (let h = 0; h < a.heads; h++) {
    diff.set(diffMatched(a.slice(layer, h, kind), a.n, b.slice(layer, h, kind), b.n, match.pairs), h * P * P);
  }
  held.length = 0;
  return { ...match, diff, heads: a.heads };
}
