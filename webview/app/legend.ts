// The colour legend above the maps (heatmap and head grid alike): the ramp, its limits and what they mean.
import type { MatrixKind } from '../../src/shared/kinds';
import { formatValue } from '../../src/shared/format';
import { describeRange, type Range } from '../colors';
import { $ } from '../dom';

export function renderLegend(range: Range, lut: Uint8ClampedArray, kind: MatrixKind): void {
  const bar = $<HTMLCanvasElement>('#legend-bar');
  const ctx = bar.getContext('2d');
  if (ctx) {
    const img = ctx.createImageData(256, 1);
    img.data.set(lut);
    ctx.putImageData(img, 0, 0);
  }
  $('#legend-min').textContent = `${range.percentile || range.log ? '≤ ' : ''}${formatValue(range.min)}`;
  $('#legend-max').textContent = `${range.percentile ? '≥ ' : ''}${formatValue(range.max)}`;
  $('#legend-label').textContent = describeRange(range, kind);
  $('#legend-label').title = $('#legend-label').textContent;
}

/** Adds what the map shows (an aggregate, merged words) to the legend's line. */
export function appendLegendLabel(text: string): void {
  $('#legend-label').textContent += text;
}
