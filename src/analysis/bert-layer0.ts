// What BERT's entangled attention does with position, read off layer 0's exact score split (c2c, c2p, p2c, p2p,
// rest; engine/graph/bert-decomposition.ts). Its position terms come from absolute position embeddings mixed into
// the content by one LayerNorm; collapsing them onto δ = i − j shows how much of that is relative. Only layer 0
// has the split: every later layer's input mixes content and position beyond separating.
import { DECOMPOSITION_TERMS, type DecompositionTerm } from '../shared/kinds';
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import { distanceProfile, type DistanceProfile } from './distance-profile';
import { headShares, type CellShares, type ShareWeighting } from './term-shares';

/** The terms a BERT distance profile shows: the three position terms and c2c for reference. */
export type BertProfileTerm = Exclude<DecompositionTerm, 'rest'>;
export const BERT_PROFILE_TERMS: readonly BertProfileTerm[] = DECOMPOSITION_TERMS.filter((t): t is BertProfileTerm => t !== 'rest');

/** The one layer whose score BERT splits by embedding part. */
export const BERT_SPLIT_LAYER = 0;

function requireSplit(result: ExplainResult): void {
  if (!result.hasDecomposition) {
    throw new LensError(
      result.model.architecture === 'bert'
        ? 'this BERT result has no layer-0 split: explain again with layer 0 included'
        : 'the layer-0 split by embedding part exists for BERT models only',
    );
  }
}

/** Layer 0's c2c, c2p, p2c and p2p of one head collapsed onto δ (all query rows, or only `query`'s). */
export async function bertDistanceProfiles(
  result: ExplainResult,
  head: number,
  query?: number,
): Promise<Record<BertProfileTerm, DistanceProfile>> {
  requireSplit(result);
  const split = await result.layer0Decomposition();
  const opts = query === undefined ? { head } : { head, query };
  const out = {} as Record<BertProfileTerm, DistanceProfile>;
  for (const t of BERT_PROFILE_TERMS) out[t] = distanceProfile(split[t], result.n, opts);
  return out;
}

/**
 * Per head of layer 0, the mean share of |c2c|, |c2p|, |p2c|, |p2p| and |rest| in the score, by term-shares.ts's
 * rule (per cell |t| over the sum of the five magnitudes, then the mean over cells): `[H]` arrays.
 */
export async function bertShares(result: ExplainResult, weighting: ShareWeighting = 'uniform'): Promise<Required<CellShares>> {
  requireSplit(result);
  const split = await result.layer0Decomposition();
  let probs: Float32Array | undefined;
  if (weighting === 'probs') {
    await result.load(BERT_SPLIT_LAYER);
    probs = result.tensor(BERT_SPLIT_LAYER, 'probs');
  }
  return headShares(split, result.n, weighting, probs) as Required<CellShares>;
}
