// Value ranges and how values map onto a colour ramp's 256 steps: the limits (exact, robust, per row, log) and
// the step of each value. Shared by the webview, which colours the steps, and the host, which sends a long
// input's heatmap as steps already pooled to the screen's size. Pure: no DOM.
import type { ScalingName } from './protocol/lens-names';

/** A value range; `signed` ranges are symmetric around 0 so that 0 sits on the scale's midpoint. */
export interface Range {
  min: number;
  max: number;
  signed: boolean;
  /** Colours follow log10(v) between min and max (> 0); values ≤ 0 take the low end. */
  log?: boolean;
  /** Set when the limits are a percentile of the data rather than its extremes. */
  percentile?: number;
  /** Each row was divided by its own largest |value| before colouring. */
  rows?: boolean;
  /** Each row on its own log scale (row-scale.ts): `clipped` is the share of cells at or below their row's floor. */
  rowLog?: {
    decades: number;
    minTop: number;
    keys: number;
    clipped: number;
    /** A pooled picture's rows are over `keys` groups of this many tokens' keys (heatmap-picture.ts). */
    pooledFrom?: number;
  };
  /** The data's true extent, when the limits clip it (legend: "data to …"). */
  exact?: Range;
}

/** Steps of a colour ramp: a value maps to one of these (lutIndex). */
export const LUT_SIZE = 256;

/** Exact finite min/max of the values; signed ranges become [-m, m] with m = max |v|, probs [0, max]. */
export function valueRange(values: Float32Array, signed: boolean): Range {
  let lo = Infinity;
  let hi = -Infinity;
  // Indexed loops: for…of over a typed array is several times slower, and a long input's head is 3.8 M cells.
  for (let k = 0; k < values.length; k++) {
    const v = values[k] ?? NaN;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    // Masked scores can be -inf or the array empty: fall back to finite values only.
    [lo, hi] = finiteBounds(values);
    if (lo > hi) return signed ? { min: -1, max: 1, signed } : { min: 0, max: 1, signed };
  }
  if (signed) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return { min: -m, max: m, signed };
  }
  return { min: 0, max: hi > 0 ? hi : 1, signed };
}

/** How values map onto the ramp: linear between robust limits, log10 (probabilities), or each row to its own maximum. */
export type Scaling = ScalingName;
/** The percentile the robust limits sit at: the top 1% of cells share the end colour instead of setting it. */
export const CLIP_PERCENTILE = 99;
const SAMPLE = 1 << 16;

/** The q-quantile (0..1) of the finite values (of |v| when `abs`), from an even sample of at most 65,536 cells. */
export function quantile(values: Float32Array, q: number, abs = false, positiveOnly = false): number {
  const stride = Math.max(1, Math.ceil(values.length / SAMPLE));
  const sample = new Float32Array(Math.ceil(values.length / stride));
  let m = 0;
  for (let k = 0; k < values.length; k += stride) {
    const x = values[k] ?? NaN;
    const v = abs ? Math.abs(x) : x;
    if (Number.isFinite(v) && (!positiveOnly || v > 0)) sample[m++] = v;
  }
  if (!m) return NaN;
  const sorted = sample.subarray(0, m).sort();
  return sorted[Math.min(m - 1, Math.max(0, Math.round(q * (m - 1))))] ?? NaN;
}

/**
 * Limits that let the bulk of a matrix use the whole ramp: [0, p99] for probabilities, ±p99(|v|) for signed
 * kinds, and for log scale [p99.9 / 10⁴ or the smallest positive value, p99.9]. Cells beyond the limits take
 * the end colours; `clipped` says how far the data really goes, for the legend.
 */
export function robustRange(values: Float32Array, signed: boolean, scaling: Scaling = 'linear'): Range {
  const exact = valueRange(values, signed);
  if (scaling === 'row') return { min: signed ? -1 : 0, max: 1, signed, rows: true };
  if (scaling === 'log' && !signed) {
    const hi = quantile(values, 0.999, false, true);
    const lo = quantile(values, 0.01, false, true);
    if (!(hi > 0)) return { ...exact, exact };
    return { min: Math.max(lo, hi / 1e4), max: hi, signed: false, log: true, percentile: 99.9, exact };
  }
  const q = quantile(values, CLIP_PERCENTILE / 100, signed);
  if (!(q > 0) || q >= exact.max) return { ...exact, exact };
  return signed
    ? { min: -q, max: q, signed, percentile: CLIP_PERCENTILE, exact }
    : { min: 0, max: q, signed, percentile: CLIP_PERCENTILE, exact };
}

/** Each row divided by its own largest |value| (rows of zeros stay zero): a row's strongest key is always the end colour. */
export function normaliseRows(values: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < rows; i++) {
    let m = 0;
    for (let j = 0; j < cols; j++) {
      const a = Math.abs(values[i * cols + j] ?? 0);
      if (Number.isFinite(a) && a > m) m = a;
    }
    const inv = m > 0 ? 1 / m : 0;
    for (let j = 0; j < cols; j++) out[i * cols + j] = (values[i * cols + j] ?? NaN) * inv;
  }
  return out;
}

/** Position 0..1 of a value on the ramp (NaN for NaN). */
export function rampPosition(v: number, range: Range): number {
  if (range.log) {
    const lo = Math.log10(range.min);
    const span = Math.log10(range.max) - lo;
    return span > 0 ? (Math.log10(v > 0 ? v : range.min) - lo) / span : 0;
  }
  const span = range.max - range.min;
  return span > 0 ? (v - range.min) / span : range.signed ? 0.5 : 0;
}

/** Index into the LUT for a value (clamped; NaN maps to the midpoint). */
export function lutIndex(v: number, range: Range): number {
  if (Number.isNaN(v) || !(range.max > range.min)) return range.signed ? LUT_SIZE >> 1 : 0;
  const t = rampPosition(v, range);
  return Math.max(0, Math.min(LUT_SIZE - 1, Math.round(t * (LUT_SIZE - 1))));
}

/**
 * The legend's data extremes from the float32 matrix (the host measured them) instead of the half values; where
 * the limits are the extremes themselves, those too. Percentile and log limits stay what the colours use.
 */
export function withExactExtent(range: Range, extent: readonly [number, number] | undefined): Range {
  if (!extent || range.rows) return range;
  const [lo, hi] = extent;
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const exact: Range = range.signed ? { min: -m, max: m, signed: true } : { min: 0, max: hi > 0 ? hi : 1, signed: false };
  return range.percentile || range.log ? { ...range, exact } : { ...exact, exact };
}

/** Finite minimum and maximum ([0, 0] when there is no finite value). */
export function finiteExtent(values: Float32Array): [number, number] {
  const [lo, hi] = finiteBounds(values);
  return lo <= hi ? [lo, hi] : [0, 0];
}

/** Finite minimum and maximum; [∞, −∞] when there is no finite value. */
function finiteBounds(values: Float32Array): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 0; k < values.length; k++) {
    const v = values[k] ?? NaN;
    if (v < lo && v > -Infinity) lo = v;
    if (v > hi && v < Infinity) hi = v;
  }
  return [lo, hi];
}
