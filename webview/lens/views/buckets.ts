// The Buckets tab: every (query, key) pair coloured by whether it sees its exact relative distance, shares a log
// bucket with other distances, or is clamped at the span's edge; the readout names the table row it reads.
import { fromBuffer } from '../../../src/shared/protocol/lens';
import type { Range } from '../../../src/shared/value-range';
import { el } from '../../common/dom';
import { $picture } from '../state/picture';
import { $init } from '../state/store';
import { bucketPairText, bucketSummary, ZONE_COLORS, ZONE_TEXT } from './buckets-model';
import { matrixCanvas, withAxes, onCell, paletteLut, readout, sidePx, swatch } from './kit';
import type { ViewContext } from './view-context';

export async function renderBuckets(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const r = await ctx.request({ type: 'buckets' });
  const init = $init.get();
  if (!ctx.isCurrent() || !init) return;
  const n = r.n;
  const zoneOf = fromBuffer(r.zoneOf, n * n);
  const rowOf = fromBuffer(r.rowOf, n * n);
  const zoneAt = (code: number) => r.zones[code] ?? 'exact';
  // Three-entry palette spread over the LUT: zone codes 0, 1, 2 map to indices 0, 128, 255 of range [0, 2].
  const lut = paletteLut((t) => {
    const k = Math.round(t * 255);
    return ZONE_COLORS[zoneAt(k < 64 ? 0 : k < 192 ? 1 : 2)];
  });
  const range: Range = { min: 0, max: 2, signed: false };
  const c = matrixCanvas('buckets-matrix', zoneOf, n, n, range, lut, sidePx(n, 1), 'Bucket zones: rows queries, columns keys');
  const byRow = new Map(r.groups.map((g) => [g.row, g]));
  onCell(c, n, (i, j) => {
    const k = i * n + j;
    const row = rowOf[k] ?? NaN;
    readout(bucketPairText(i, j, zoneAt(zoneOf[k] ?? NaN), row, byRow.get(row)));
  });
  const legend = el(
    'div',
    { id: 'buckets-legend', class: 'legend' },
    r.zones.map((z) => swatch(ZONE_COLORS[z], ZONE_TEXT[z])),
  );
  const summary = el(
    'ul',
    { id: 'buckets-summary', class: 'meta' },
    bucketSummary(r.groups, r.mid).map((line) => el('li', {}, [line])),
  );
  body.append(el('div', { class: 'analysis-row' }, [withAxes(c, n, init.text, init.tokens), el('div', {}, [legend, summary])]));
  $picture.set({ canvas: c, values: zoneOf, rows: n, cols: n, range, lut, title: 'Relative-position bucket zones' });
}
