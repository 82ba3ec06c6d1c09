// Colour scales for the heatmaps as 256-entry RGBA lookup tables. Pure: no DOM, runs under node for tests.
import type { MatrixKind } from '../src/shared/kinds';
import type { ColorScaleName } from '../src/shared/protocol';

export type Rgb = readonly [number, number, number];

/** A value range; `signed` ranges are symmetric around 0 so that 0 sits on the scale's midpoint. */
export interface Range {
  min: number;
  max: number;
  signed: boolean;
}

export const LUT_SIZE = 256;

// Anchor colours (sRGB). Diverging: blue → near-white → red; sequential: a viridis-like ramp.
const DIVERGING: Rgb[] = [
  [33, 102, 172],
  [103, 169, 207],
  [209, 229, 240],
  [247, 247, 247],
  [253, 219, 199],
  [239, 138, 98],
  [178, 24, 43],
];
const VIRIDIS: Rgb[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];
// Sequential for probabilities under the diverging theme: white → the diverging red end.
const REDS: Rgb[] = [
  [247, 247, 247],
  [253, 219, 199],
  [239, 138, 98],
  [178, 24, 43],
  [103, 0, 13],
];

function interpolate(anchors: Rgb[], t: number): Rgb {
  const x = Math.min(1, Math.max(0, t)) * (anchors.length - 1);
  const k = Math.min(anchors.length - 2, Math.floor(x));
  const f = x - k;
  const a = anchors[k];
  const b = anchors[k + 1];
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

/** RGBA table for a scale; signed kinds use the diverging ramp even under 'viridis' only when asked. */
export function makeLut(scale: ColorScaleName, signed: boolean): Uint8ClampedArray {
  const anchors = scale === 'viridis' ? VIRIDIS : signed ? DIVERGING : REDS;
  const lut = new Uint8ClampedArray(LUT_SIZE * 4);
  for (let k = 0; k < LUT_SIZE; k++) {
    const [r, g, b] = interpolate(anchors, k / (LUT_SIZE - 1));
    lut.set([r, g, b, 255], k * 4);
  }
  return lut;
}

/** Finite min/max of the values; signed ranges become [-m, m] with m = max |v|, probs [0, max]. */
export function valueRange(values: Float32Array, signed: boolean): Range {
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    // Masked scores can be -inf or the array empty: fall back to finite values only.
    lo = Infinity;
    hi = -Infinity;
    for (let k = 0; k < values.length; k++) {
      const v = values[k];
      if (Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    if (lo > hi) return signed ? { min: -1, max: 1, signed } : { min: 0, max: 1, signed };
  }
  if (signed) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return { min: -m, max: m, signed };
  }
  return { min: 0, max: hi > 0 ? hi : 1, signed };
}

/** Index into the LUT for a value (clamped; NaN maps to the midpoint). */
export function lutIndex(v: number, range: Range): number {
  const span = range.max - range.min;
  if (!(span > 0) || Number.isNaN(v)) return range.signed ? LUT_SIZE >> 1 : 0;
  const t = (v - range.min) / span;
  return Math.max(0, Math.min(LUT_SIZE - 1, Math.round(t * (LUT_SIZE - 1))));
}

export function colorOf(v: number, range: Range, lut: Uint8ClampedArray): Rgb {
  const k = lutIndex(v, range) * 4;
  return [lut[k], lut[k + 1], lut[k + 2]];
}

/** Fills an RGBA pixel buffer with one pixel per matrix cell ([rows, cols] row-major). */
export function paintMatrix(values: Float32Array, range: Range, lut: Uint8ClampedArray, out: Uint8ClampedArray): void {
  if (out.length < values.length * 4) throw new RangeError('pixel buffer too small');
  const span = range.max - range.min;
  const inv = span > 0 ? (LUT_SIZE - 1) / span : 0;
  const mid = range.signed ? LUT_SIZE >> 1 : 0;
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    let idx: number;
    if (Number.isNaN(v) || inv === 0) idx = mid;
    else {
      idx = Math.round((v - range.min) * inv);
      if (idx < 0) idx = 0;
      else if (idx > LUT_SIZE - 1) idx = LUT_SIZE - 1;
    }
    const s = idx * 4;
    const d = k * 4;
    out[d] = lut[s];
    out[d + 1] = lut[s + 1];
    out[d + 2] = lut[s + 2];
    out[d + 3] = 255;
  }
}

/** CSS `rgb()` string for legends and token highlights. */
export function cssRgb([r, g, b]: Rgb, alpha = 1): string {
  return alpha >= 1 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${alpha.toFixed(3)})`;
}
