// A legend's colour ramp: the 256 colours of a lookup table, one pixel each, stretched by CSS, and the words at
// its two ends (the lens panel's legend, Compare Heads' and the HTML report's).
import { formatValue } from '../../src/shared/format';
import type { Range } from '../../src/shared/value-range';

export function paintRamp(bar: HTMLCanvasElement, lut: Uint8ClampedArray): void {
  const ctx = bar.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(256, 1);
  img.data.set(lut);
  ctx.putImageData(img, 0, 0);
}

/** The words at either end of a legend's ramp. */
export function legendEnd(range: Range, end: 'min' | 'max'): string {
  if (end === 'min') return range.rowLog ? 'row floor' : `${range.percentile || range.log ? '≤ ' : ''}${formatValue(range.min)}`;
  return range.rowLog ? 'row top' : `${range.percentile ? '≥ ' : ''}${formatValue(range.max)}`;
}
