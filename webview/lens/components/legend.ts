// The colour legend above the maps (heatmap and head grid alike): the ramp, its limits and what they mean.
import type { MatrixKind } from '../../../src/shared/kinds';
import { describeRange } from '../../common/colors';
import { type Range } from '../../../src/shared/value-range';
import { $ } from '../../common/dom';
import { legendEnd, paintRamp } from '../../common/legend-bar';

export function renderLegend(range: Range, lut: Uint8ClampedArray, kind: MatrixKind): void {
  paintRamp($<HTMLCanvasElement>('#legend-bar'), lut);
  $('#legend-min').textContent = legendEnd(range, 'min');
  $('#legend-max').textContent = legendEnd(range, 'max');
  $('#legend-label').textContent = describeRange(range, kind);
  $('#legend-label').title = $('#legend-label').textContent;
}

/** Adds what the map shows (an aggregate, merged words) to the legend's line. */
export function appendLegendLabel(text: string): void {
  $('#legend-label').textContent += text;
}
