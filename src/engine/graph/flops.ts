import type { ModelSpec } from '../types';
import { positionIndexByDelta } from './relative-position';

/** Multiply-add FLOPs (2 per MAC) of the explain graph for n tokens: matrix products only (≥ 95% of the work). */
export function graphFlops(s: ModelSpec, n: number): number {
  const D = s.hiddenSize,
    A = s.allHeadSize,
    H = s.numHeads,
    d = s.headDim,
    I = s.intermediateSize;
  const terms = s.relativeAttention ? s.posAttType.length : 0;
  const distinctRows = terms ? new Set(positionIndexByDelta(n + 1, s)).size : 0; // rows for δ ∈ [−n, n]
  const perLayer =
    2 * n * D * 3 * A + // q, k, v
    2 * H * n * n * d + // c2c
    terms * (2 * distinctRows * D * A + 2 * H * n * 2 * n * d) + // position projections + c2p / p2c products
    2 * H * n * n * d + // probs · v
    2 * n * A * D + // attention output
    2 * 2 * n * D * I; // feed-forward
  const embedProj = s.embeddingSize !== D ? 2 * n * s.embeddingSize * D : 0;
  const conv = s.convKernelSize > 0 ? (2 * n * D * D * s.convKernelSize) / s.convGroups : 0;
  return s.numLayers * perLayer + embedProj + conv;
}
