// Pure helpers of the softmax ablation view (and the rollout's preset picker): preset names and readouts. No DOM.
import { formatValue } from '../../../src/shared/format';
import type { AblationPresetName } from '../../../src/shared/protocol/lens';

export const PRESET_LABELS: Record<AblationPresetName, string> = {
  all: 'all terms (real)',
  'content-only': 'content only (c2c)',
  'position-only': 'position only (c2p + p2c)',
  'no-c2c': 'without c2c',
  'no-c2p': 'without c2p',
  'no-p2c': 'without p2c',
};

/** Per-row ablation readout: how far the ablated row is from the real one. */
export function ablationRowText(i: number, token: string, kl: number, tv: number): string {
  return `query #${i} “${token}”: KL(real ‖ ablated) = ${formatValue(kl)} nats, total variation = ${formatValue(tv)}`;
}

/** Mean and max of a per-row statistic (the ablation summary line). */
export function meanMax(v: Float32Array): { mean: number; max: number; argmax: number } {
  let s = 0;
  let max = -Infinity;
  let argmax = -1;
  v.forEach((x, k) => {
    s += x;
    if (x > max) {
      max = x;
      argmax = k;
    }
  });
  return { mean: v.length ? s / v.length : NaN, max, argmax };
}
