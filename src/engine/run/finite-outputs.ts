// Attention that is NaN or ±Inf must never be drawn as if it were a number. Weights can be finite and still
// overflow float32 once multiplied (values near 3e38); the damage then reaches every later layer. Explain checks
// what its forward pass returns (each kept layer's input states, the relative embeddings and the output of the
// last requested layer: n × hidden floats each), so a damaged checkpoint is refused before any view opens, with
// the layer where the damage starts; a layer's probabilities are checked again when that layer is computed.
import { LensError } from '../errors';
import { firstNonFinite } from '../checkpoint/finite';
import type { LayerTensors } from '../result/explain-result';

function bad(m: Float32Array): boolean {
  return firstNonFinite(new Uint8Array(m.buffer, m.byteOffset, m.byteLength), 'float32') >= 0;
}

const ADVICE = 'the weights overflow float32 on this input (a damaged or badly converted checkpoint) — use an intact checkpoint.';

function refuse(model: string, what: string): LensError {
  return new LensError(`${model}: ${what} holds NaN or Infinity: ${ADVICE}`, 'corrupt');
}

/** Where damage first seen entering layer `to + 1` started, given the layer before it whose input was intact. */
function span(from: number | undefined, to: number): string {
  if (from === undefined) return to < 0 ? 'the embeddings' : `the embeddings or ${to === 0 ? 'layer 0' : `layers 0…${to}`}`;
  return from === to ? `layer ${to}` : `layers ${from}…${to}`;
}

/**
 * The forward pass's outputs: `states` holds the input states of `layers` (ascending, `stride` floats each),
 * `output` the output of the last of them.
 */
export function assertFiniteForward(
  model: string,
  layers: number[],
  states: Float32Array,
  stride: number,
  rel: Float32Array | undefined,
  output: Float32Array,
): void {
  if (rel !== undefined && bad(rel)) throw refuse(model, 'the relative position embeddings');
  for (const [k, layer] of layers.entries()) {
    if (bad(states.subarray(k * stride, (k + 1) * stride)))
      throw refuse(model, `the output of ${span(k === 0 ? undefined : layers[k - 1], layer - 1)} (the input of layer ${layer})`);
  }
  const last = layers[layers.length - 1];
  if (bad(output)) throw refuse(model, `the output of layer ${last}`);
}

/** One layer's matrices, as computed on demand. */
export function assertFiniteLayer(model: string, t: LayerTensors): void {
  if (bad(t.probs)) throw refuse(model, `the attention of layer ${t.layer}`);
}
