// Colour scales for the heatmaps as 256-entry RGBA lookup tables (the steps values map to are in
// src/shared/value-range.ts), and the legend's words for a range. Pure: no DOM, runs under node for tests.
import type { ColorScaleName } from '../../src/shared/protocol/lens';
import { formatValue } from '../../src/shared/format';
import { LUT_SIZE, lutIndex, type Range } from '../../src/shared/value-range';

export type Rgb = readonly [number, number, number];

/** Which way the VS Code theme goes: the low end of sequential ramps matches its background. */
export type ThemeKind = 'light' | 'dark';

// Anchor colours (sRGB), each ramp monotone in perceived lightness so that equal steps in value read as equal
// steps in colour. Light theme: ColorBrewer RdBu (diverging, white at 0) and Blues-to-navy (sequential, white
// at 0, so "no attention" is the page). Dark theme: the same hues around a near-black centre, and an
// inferno-like ramp from black, so nothing glares on a dark page.
const DIVERGING_LIGHT: Rgb[] = [
  [5, 48, 97],
  [33, 102, 172],
  [103, 169, 207],
  [209, 229, 240],
  [247, 247, 247],
  [253, 219, 199],
  [239, 138, 98],
  [178, 24, 43],
  [103, 0, 31],
];
const DIVERGING_DARK: Rgb[] = [
  [160, 210, 255],
  [70, 150, 230],
  [35, 85, 150],
  [25, 40, 65],
  [30, 30, 30],
  [70, 30, 25],
  [160, 55, 40],
  [235, 105, 70],
  [255, 185, 150],
];
const SEQUENTIAL_LIGHT: Rgb[] = [
  [250, 250, 252],
  [222, 235, 247],
  [158, 202, 225],
  [66, 146, 198],
  [33, 113, 181],
  [8, 69, 148],
  [8, 36, 90],
];
// Inferno's hues, with the first third drawn out so that the ramp leaves a dark page as slowly as the light
// ramp leaves a white one (CIELAB distance to the page at each point within ~2 of the light ramp's up to 0.2):
// the ~1/n floor of a long probs row stays page-coloured, as it does in the light theme.
const SEQUENTIAL_DARK: Rgb[] = [
  [30, 30, 32],
  [33, 29, 40],
  [37, 26, 56],
  [58, 18, 90],
  [108, 26, 110],
  [168, 46, 94],
  [220, 82, 56],
  [246, 148, 26],
  [251, 214, 78],
  [252, 255, 164],
];
const VIRIDIS: Rgb[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

function interpolate(anchors: Rgb[], t: number): Rgb {
  if (anchors.length < 2) throw new RangeError('interpolate: a ramp needs at least two anchors');
  const [r, g, b] = interpolateExact(anchors, t);
  return [Math.round(r), Math.round(g), Math.round(b)];
}

/** CIELAB (D65) of an sRGB colour: the space where equal distances look equally different. */
export function cielab([r, g, b]: Rgb): Rgb {
  const lin = (u: number) => ((u /= 255) <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (t * 24389) / 27 / 116 + 16 / 116);
  const x = f((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047);
  const y = f(0.2126 * R + 0.7152 * G + 0.0722 * B);
  const z = f((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/**
 * The ramp's positions re-spaced so that equal steps are equal CIELAB distances along it: the row-log scale
 * promises that a 1.5× weight step is a visible colour step everywhere on the ramp, not only where the anchors
 * happen to lie far apart (the light ramp's first sixth moves half as fast as its middle).
 */
function uniformPositions(anchors: Rgb[]): Float64Array {
  const STEPS = 1024;
  const cum = new Float64Array(STEPS + 1);
  let prev = cielab(interpolateExact(anchors, 0));
  for (let k = 1; k <= STEPS; k++) {
    const lab = cielab(interpolateExact(anchors, k / STEPS));
    cum[k] = (cum[k - 1] ?? 0) + Math.hypot(lab[0] - prev[0], lab[1] - prev[1], lab[2] - prev[2]);
    prev = lab;
  }
  const total = cum[STEPS] ?? 0;
  const out = new Float64Array(LUT_SIZE);
  let k = 0;
  for (let e = 0; e < LUT_SIZE; e++) {
    const want = (e / (LUT_SIZE - 1)) * total;
    while (k < STEPS && (cum[k + 1] ?? 0) < want) k++;
    const a = cum[k] ?? 0;
    const b = cum[k + 1] ?? a;
    out[e] = Math.min(1, (k + (b > a ? (want - a) / (b - a) : 0)) / STEPS);
  }
  return out;
}

function interpolateExact(anchors: Rgb[], t: number): Rgb {
  const x = Math.min(1, Math.max(0, t)) * (anchors.length - 1);
  const k = Math.min(anchors.length - 2, Math.floor(x));
  const f = x - k;
  const a = anchors[k] ?? [0, 0, 0];
  const b = anchors[k + 1] ?? a;
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

/**
 * RGBA table for a scale. 'diverging' (the default) follows the theme: a diverging ramp for signed kinds, a
 * sequential one for probabilities; 'viridis' is one perceptual ramp for everything, whatever the theme.
 * `uniform`: the positions re-spaced to equal CIELAB steps (the row-log scale's ramp).
 */
export function makeLut(scale: ColorScaleName, signed: boolean, theme: ThemeKind = 'light', uniform = false): Uint8ClampedArray {
  const anchors =
    scale === 'viridis'
      ? VIRIDIS
      : signed
        ? theme === 'dark'
          ? DIVERGING_DARK
          : DIVERGING_LIGHT
        : theme === 'dark'
          ? SEQUENTIAL_DARK
          : SEQUENTIAL_LIGHT;
  const at = uniform ? uniformPositions(anchors) : undefined;
  const lut = new Uint8ClampedArray(LUT_SIZE * 4);
  for (let k = 0; k < LUT_SIZE; k++) {
    const [r, g, b] = interpolate(anchors, at ? (at[k] ?? 1) : k / (LUT_SIZE - 1));
    lut.set([r, g, b, 255], k * 4);
  }
  return lut;
}

/** The table a map with `range` is painted with: the uniform ramp for the row-log scale. */
export function lutFor(scale: ColorScaleName, range: Range, theme: ThemeKind = 'light'): Uint8ClampedArray {
  return makeLut(scale, range.signed, theme, !!range.rowLog);
}

export function colorOf(v: number, range: Range, lut: Uint8ClampedArray): Rgb {
  const k = lutIndex(v, range) * 4;
  return [lut[k] ?? 0, lut[k + 1] ?? 0, lut[k + 2] ?? 0];
}

/** Fills an RGBA pixel buffer with one pixel per matrix cell ([rows, cols] row-major). */
export function paintMatrix(values: Float32Array, range: Range, lut: Uint8ClampedArray, out: Uint8ClampedArray): void {
  if (out.length < values.length * 4) throw new RangeError('pixel buffer too small');
  if (range.log) {
    for (let k = 0; k < values.length; k++) {
      const s = lutIndex(values[k] ?? NaN, range) * 4;
      out.set(lut.subarray(s, s + 4), k * 4);
    }
    return;
  }
  const span = range.max - range.min;
  const inv = span > 0 ? (LUT_SIZE - 1) / span : 0;
  const mid = range.signed ? LUT_SIZE >> 1 : 0;
  for (let k = 0; k < values.length; k++) {
    const v = values[k] ?? NaN;
    let idx: number;
    if (Number.isNaN(v) || inv === 0) idx = mid;
    else {
      idx = Math.round((v - range.min) * inv);
      if (idx < 0) idx = 0;
      else if (idx > LUT_SIZE - 1) idx = LUT_SIZE - 1;
    }
    const s = idx * 4;
    const d = k * 4;
    out[d] = lut[s] ?? 0;
    out[d + 1] = lut[s + 1] ?? 0;
    out[d + 2] = lut[s + 2] ?? 0;
    out[d + 3] = 255;
  }
}

/** Fills an RGBA pixel buffer from colour-ramp steps (one byte a pixel: a map the host sent as a picture). */
export function paintSteps(steps: Uint8Array, lut: Uint8ClampedArray, out: Uint8ClampedArray): void {
  if (out.length < steps.length * 4) throw new RangeError('pixel buffer too small');
  // One 32-bit write a pixel: the LUT's RGBA entries as words, in the platform's byte order like `out`.
  const words = new Uint32Array(lut.buffer, lut.byteOffset, lut.length >> 2);
  const dst = new Uint32Array(out.buffer, out.byteOffset, steps.length);
  for (let k = 0; k < steps.length; k++) dst[k] = words[steps[k] ?? 0] ?? 0;
}

/** "82%", "0.4%", "< 0.1%": a share for the legend. */
function formatPercent(x: number): string {
  const p = x * 100;
  if (p > 0 && p < 0.1) return '< 0.1%';
  return `${p >= 10 ? p.toFixed(0) : p.toFixed(1).replace(/\.0$/, '')}%`;
}

/** CSS `rgb()` string for legends and token highlights. */
export function cssRgb([r, g, b]: Rgb, alpha = 1): string {
  return alpha >= 1 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${alpha.toFixed(3)})`;
}

/** The legend's words for a range: what the ends mean and, when limits clip the data, how far it really goes. */
export function describeRange(range: Range, kind: string): string {
  const ex = range.exact;
  const beyond =
    ex && range.percentile
      ? `; data ${formatValue(ex.min)} … ${formatValue(ex.max)}, the outer ${(100 - range.percentile).toFixed(1).replace(/\.0$/, '')}% share the end colours`
      : '';
  if (range.log)
    return `${kind}, log scale: ${formatValue(range.min)} (and below) … ${formatValue(range.max)} (${range.percentile}th percentile)${beyond}`;
  if (range.rowLog) {
    const r = range.rowLog;
    if (r.pooledFrom)
      return `${kind} summed over ${r.keys} groups of the ${r.pooledFrom} keys, each row on a log scale: its strongest group (at least ${r.minTop}/${r.keys} = ${formatValue(r.minTop / r.keys)}) … ${Math.round(10 ** r.decades)}× less (at least 1/${r.keys} = ${formatValue(1 / r.keys)}); ${formatPercent(r.clipped)} of groups at or below their row's floor share the low end; zoom in for every cell`;
    return `${kind}, each row on a log scale: its strongest key (at least ${r.minTop}/n = ${formatValue(r.minTop / r.keys)}) … ${Math.round(10 ** r.decades)}× less (at least 1/n = ${formatValue(1 / r.keys)}); ${formatPercent(r.clipped)} of cells at or below their row's floor share the low end`;
  }
  if (range.rows) return range.signed ? `${kind}, each row ÷ its largest |value| (−1 … 0 … +1)` : `${kind}, each row ÷ its maximum (0 … 1)`;
  if (range.signed)
    return `${kind}, centred at 0 (blue lowers the score, red raises it), ±${formatValue(range.max)}${range.percentile ? ` = ${range.percentile}th percentile of |value|` : ' = max |value|'}${beyond}`;
  return `${kind}, 0 … ${formatValue(range.max)}${range.percentile ? ` (${range.percentile}th percentile)` : ' (max)'}${beyond}`;
}
