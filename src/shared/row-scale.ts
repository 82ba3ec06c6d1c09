// The default colour mapping of attention probabilities: each row on a log scale from its own floor to its own
// top, so that brightness ranks the keys of a row at every length. A global scale cannot: at 500 tokens the
// 99th percentile is ~0.015, so weights of 0.30, 0.18 and 0.12 all take the end colour. Pure: runs under node.
import type { ScalingName } from './protocol/lens-names';
import { normaliseRows, robustRange, type Range } from './value-range';

/** Decades between a row's top and its floor: a 1.5× step is then ≥ log10(1.5)/1.5 ≈ 12% of the ramp (ΔE ≥ 13 light). */
export const ROW_LOG_DECADES = 1.5;
/**
 * A row's top is at least this many times the uniform weight 1/n: a row spread evenly (no key above ~1/n)
 * stays page-coloured instead of being stretched to the full ramp, and its top is then dimmer than a real peak.
 */
export const ROW_LOG_MIN_TOP = 10;

/** One row's limits: [lo, hi] with hi = max(top, 10/n but ≤ 1), lo = max(hi/10^1.5, 1/n). */
export function rowLogLimits(top: number, n: number): { lo: number; hi: number } {
  const hi = Math.max(Number.isFinite(top) ? top : 0, Math.min(1, ROW_LOG_MIN_TOP / n));
  const lo = Math.max(hi / 10 ** ROW_LOG_DECADES, 1 / n);
  return { lo, hi };
}

/** Position 0..1 of weight `v` on its row's scale (NaN stays NaN). */
export function rowLogPosition(v: number, lo: number, hi: number): number {
  if (Number.isNaN(v)) return NaN;
  if (!(v > lo)) return 0;
  return Math.min(1, Math.log(v / lo) / Math.log(hi / lo));
}

/**
 * Ramp positions (0..1) of a `[rows, cols]` matrix of probabilities, each row on its own log scale, and the
 * share of finite cells at or below their row's floor (page-coloured). `keys` is n, the tokens a row spreads
 * over: the columns, unless the map is pooled (a thumbnail's cells are mean weights, uniform still 1/n).
 */
export function rowLogPositions(
  values: Float32Array,
  rows: number,
  cols: number,
  keys = cols,
): { positions: Float32Array; clipped: number } {
  const out = new Float32Array(values.length);
  let below = 0;
  let finite = 0;
  for (let i = 0; i < rows; i++) {
    const base = i * cols;
    let top = 0;
    for (let j = 0; j < cols; j++) {
      const v = values[base + j] ?? NaN;
      if (v > top) top = v;
    }
    const { lo, hi } = rowLogLimits(top, keys);
    for (let j = 0; j < cols; j++) {
      const v = values[base + j] ?? NaN;
      if (Number.isFinite(v)) {
        finite++;
        if (!(v > lo)) below++;
      }
      out[base + j] = rowLogPosition(v, lo, hi);
    }
  }
  return { positions: out, clipped: finite ? below / finite : 0 };
}

/** The range the positions of rowLogPositions are painted with (linear 0..1), with what the legend says. */
export function rowLogRange(clipped: number, keys: number): Range {
  return { min: 0, max: 1, signed: false, rows: true, rowLog: { decades: ROW_LOG_DECADES, minTop: ROW_LOG_MIN_TOP, keys, clipped } };
}

/** The colour-mapping choices a map offers, as [value, label]: 'auto' is effectiveScaling's default. */
export const SCALING_CHOICES: readonly (readonly [ScalingName | 'auto', string])[] = [
  ['auto', 'default (probs: each row, log)'],
  ['row-log', 'each row, log'],
  ['linear', 'linear, robust limits'],
  ['log', 'log (probs)'],
  ['row', 'each row to its max'],
];

/**
 * The mapping a view uses when the reader picked none (`undefined`): probabilities each row on a log scale,
 * signed terms linear between robust limits. A row-log pick on a signed term is per-row linear (no log of a sign).
 */
export function effectiveScaling(picked: ScalingName | undefined, signed: boolean): ScalingName {
  const s = picked ?? (signed ? 'linear' : 'row-log');
  return s === 'row-log' && signed ? 'row' : s;
}

/**
 * What a map paints for `values` (`[rows, cols]`, keys along cols) under `scaling`: the values to colour and the
 * range they are coloured with.
 */
export function mapValues(
  values: Float32Array,
  rows: number,
  cols: number,
  signed: boolean,
  scaling: ScalingName,
  keys = cols,
): { shown: Float32Array; range: Range } {
  if (scaling === 'row-log' && !signed) {
    const { positions, clipped } = rowLogPositions(values, rows, cols, keys);
    return { shown: positions, range: rowLogRange(clipped, keys) };
  }
  // Each row to its max: also a row-log pick on a signed term (no log of a sign; see effectiveScaling).
  const shown = scaling === 'row' || scaling === 'row-log' ? normaliseRows(values, rows, cols) : values;
  return { shown, range: robustRange(shown, signed, scaling === 'row-log' ? 'row' : scaling) };
}
