// Colours of highlighted tokens in the strip: a colour from the heatmap's own scale (so a chip matches its
// cell), never paler than 30% along the ramp so the weakest listed neighbour still shows, and black or white
// text, whichever reads on it (dark text on a dark highlight never happens).
import { type Rgb } from './colors';
import { LUT_SIZE } from '../../src/shared/value-range';

/** Relative luminance (WCAG) of an sRGB colour. */
export function luminance([r, g, b]: Rgb): number {
  const lin = (u: number) => ((u /= 255) <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/**
 * Chip colours for a neighbour of relative strength 0..1; `sign` −1 takes the low (blue) half of a diverging
 * ramp, +1 the high half, 0 a sequential ramp from its start.
 */
export function chipColours(strength: number, sign: -1 | 0 | 1, lut: Uint8ClampedArray): { background: string; color: string } {
  const s = 0.3 + 0.7 * Math.max(0, Math.min(1, strength));
  const t = sign === 0 ? s : 0.5 + 0.5 * sign * s;
  const k = Math.max(0, Math.min(LUT_SIZE - 1, Math.round(t * (LUT_SIZE - 1)))) * 4;
  const c: Rgb = [lut[k] ?? 0, lut[k + 1] ?? 0, lut[k + 2] ?? 0];
  // Contrast against black is (L + 0.05) / 0.05, against white 1.05 / (L + 0.05): they are equal at L ≈ 0.179.
  return { background: `rgb(${c.join(', ')})`, color: luminance(c) > 0.179 ? '#000' : '#fff' };
}
