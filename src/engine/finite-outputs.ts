// Attention that is NaN or ±Inf must never be drawn as if it were a number. Weights can be finite and still
// overflow float32 once multiplied (values near 3e38); the damage then reaches every later layer, so the last
// requested layer's softmax shows it. Only that matrix is checked on every run (it is small and is read anyway);
// the earlier layers are searched only to say where the overflow starts.
import { LensError } from './errors';
import { firstNonFinite } from './checkpoint/finite';
import type { LayerTensors } from './result';

function bad(m: Float32Array): boolean {
  return firstNonFinite(new Uint8Array(m.buffer, m.byteOffset, m.byteLength), 'float32') >= 0;
}

export function assertFiniteAttention(layers: LayerTensors[], model: string): void {
  const last = layers[layers.length - 1];
  if (last === undefined || !bad(last.probs)) return;
  const first = layers.find((l) => bad(l.probs) || (['c2c', 'c2p', 'p2c'] as const).some((k) => l[k] !== undefined && bad(l[k]!)));
  throw new LensError(
    `${model}: the attention of layer ${(first ?? last).layer} holds NaN or Infinity: the weights overflow float32 on this input ` +
      `(a damaged or badly converted checkpoint) — use an intact checkpoint.`,
    'corrupt',
  );
}
