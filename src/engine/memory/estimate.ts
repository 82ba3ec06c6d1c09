// How much memory explaining n tokens takes, estimated from the geometry before anything is allocated, so that a
// length the machine cannot hold gets one clear message instead of an out-of-memory crash.
import { FORWARD_HEAD_GROUP } from '../graph/deberta-graph';
import type { ModelSpec } from '../types';

/** Bytes, split by where they go. */
export interface MemoryEstimate {
  /** The forward pass in the runtime process beyond the weights: one group of heads' attention at a time, plus states. */
  forward: number;
  /** What the result keeps: every layer's input states (the runtime process keeps them too, for the layer runs). */
  states: number;
  /** One layer's matrices for all heads (what opening a layer's view computes), with the working memory. */
  layer: number;
  total: number;
}

const F32 = 4;

/** Per head, the attention of one layer holds about this many n×n float32 arrays at once (terms, [n, 2n] products, sum, softmax). */
const ATTENTION_ARRAYS_PER_HEAD = 10;

export function estimateMemory(s: ModelSpec, n: number): MemoryEstimate {
  const nn = n * n;
  const kinds = 2 + (s.relativeAttention ? s.posAttType.length : 0);
  const states = s.numLayers * n * s.hiddenSize * F32;
  const forward =
    ATTENTION_ARRAYS_PER_HEAD * Math.min(s.numHeads, FORWARD_HEAD_GROUP) * nn * F32 +
    2 * n * (s.intermediateSize + 4 * s.hiddenSize) * F32 +
    2 * states;
  // The host's layer (kinds matrices) plus a head chunk being computed in the runtime (see layerChunkHeads).
  // BERT's layer 0 adds its five-part decomposition.
  const extra = s.architecture === 'bert' ? 5 : 0;
  const layer =
    (kinds + extra) * s.numHeads * nn * F32 + Math.min(s.numHeads, layerChunkHeads(s, n)) * ATTENTION_ARRAYS_PER_HEAD * nn * F32;
  // After the forward pass both processes hold the states: the result's, and the runtime's copy the layer runs read.
  return { forward, states, layer, total: Math.max(forward, layer + states) + states };
}

/** Working memory one layer-graph run may use: heads are computed in chunks that fit. */
export const LAYER_CHUNK_BYTES = 512 * 2 ** 20;

/** Heads per one-layer run at n tokens, within `budget` bytes of working memory. */
export function layerChunkHeads(s: ModelSpec, n: number, budget = LAYER_CHUNK_BYTES): number {
  return Math.max(1, Math.min(s.numHeads, Math.floor(budget / (ATTENTION_ARRAYS_PER_HEAD * n * n * F32))));
}

/** Memory the process can take now, cgroup limits included (available-memory.ts). */
export { availableMemory } from './available-memory';
