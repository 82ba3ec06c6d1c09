// The colour legend above the maps (heatmap and head grid alike): the ramp, its limits and what they mean.
import type { MatrixKind } from '../../../src/shared/kinds';
import { formatValue } from '../../../src/shared/format';
import { describeRange, type Range } from '../../common/colors';
import { $ } from '../../common/dom';
import { paintRamp } from '../../common/legend-bar';

export function renderLegend(range: Range, lut: Uint8ClampedArray, kind: MatrixKind): void {
  paintRamp($<HTMLCanvasElement>('#legend-bar'), lut);
  $('#legend-min').textContent = range.rowLog ? 'row floor' : `${range.percentile || range.log ? '≤ ' : ''}${formatValue(range.min)}`;
  $('#legend-max').textContent = range.rowLog ? 'row top' : `${range.percentile ? '≥ ' : ''}${formatValue(range.max)}`;
  $('#legend-label').textContent = describeRange(range, kind);
  $('#legend-label').title = $('#legend-label').textContent;
}

/** Adds what the map shows (an aggregate, merged words) to the legend's line. */
export function appendLegendLabel(text: string): void {
  $('#legend-label').textContent += text;
}
