// The "Compare heads" tab: the layer × head overview, the layer's heads as small multiples on one colour
// range (click opens one, a tick compares it), and the side-by-side panes below them.
import { layerLabel, layerShort } from '../../../src/shared/emd-layers';
import { formatValue } from '../../../src/shared/format';
import { isSignedKind } from '../../../src/shared/kinds';
import { fromBuffer, type OverviewResponse } from '../../../src/shared/protocol/lens';
import { lutFor, makeLut } from '../../common/colors';
import { valueRange, type Range } from '../../../src/shared/value-range';
import { effectiveScaling, mapValues } from '../../../src/shared/row-scale';
import { $, el, themeKind } from '../../common/dom';
import { withAxisLabels } from '../../common/grid-labels';
import { paintInto } from '../../common/paint-canvas';
import { act, toggleCompareHead, update } from '../state/actions';
import { $init, $viewState } from '../state/store';
import { sizeCanvasCss, type CompareHeads } from './compare-heads';
import { renderLegend } from './legend';
import type { MatrixRequests } from './requests';

const GRID_SIZE = 96; // small multiples are block-averaged to at most this many cells a side

export class HeadsView {
  constructor(
    private readonly requests: MatrixRequests,
    private readonly compare: CompareHeads,
  ) {}

  /** Wires the overview of a new shell: click or Enter opens a head in the heatmap, arrows step. */
  wire(): void {
    const overview = $<HTMLCanvasElement>('#overview');
    overview.addEventListener('click', (e) => {
      const init = $init.get();
      if (!init || !$viewState.get()) return;
      const rect = overview.getBoundingClientRect();
      const li = Math.floor(((e.clientY - rect.top) / rect.height) * init.model.layers.length);
      const h = Math.floor(((e.clientX - rect.left) / rect.width) * init.model.heads);
      const layerAt = init.model.layers[li];
      if (layerAt !== undefined && h >= 0 && h < init.model.heads) update({ layer: layerAt, head: h, view: 'heatmap' });
    });
    overview.addEventListener('keydown', (e) => {
      if (!$init.get() || !$viewState.get()) return;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        act({ type: 'layer', delta: e.key === 'ArrowDown' ? 1 : -1 });
        e.preventDefault();
      } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        act({ type: 'head', delta: e.key === 'ArrowRight' ? 1 : -1 });
        e.preventDefault();
      } else if (e.key === 'Enter') update({ view: 'heatmap' });
    });
  }

  async render(isCurrent: () => boolean): Promise<void> {
    const state = $viewState.get();
    if (!state || !$init.get()) return;
    const { layer, term } = state;
    const [grid, ov] = await Promise.all([
      this.requests.request({ type: 'heads', layer, kind: term, maxSize: GRID_SIZE }),
      this.requests.request({ type: 'overview', kind: term }),
    ]);
    if (!isCurrent()) return;
    this.renderOverview(ov);
    const m = grid.size;
    const raw = fromBuffer(grid.data, grid.heads * m * m);
    const signed = isSignedKind(term);
    // [heads, m, m] is heads·m rows of m: per-row scaling needs no reshaping. Otherwise one range for the layer
    // so heads are comparable; robust, so one head's outliers do not fade the others.
    const { shown: all, range } = mapValues(
      raw,
      grid.heads * m,
      m,
      signed,
      effectiveScaling(state.scaling, signed),
      $init.get()?.tokens.length ?? m,
    );
    const lut = lutFor(state.colorScale, range, themeKind());
    renderLegend(range, lut, term);
    const shape = $init.get()?.model;
    $('#grid-title').textContent =
      `Heads of ${shape ? layerLabel(shape, layer) : `layer ${layer}`} (${term}; click to open, tick to compare)`;
    const box = $('#head-grid');
    const cells: HTMLElement[] = [];
    for (let h = 0; h < grid.heads; h++) {
      const canvas = el('canvas', { class: 'thumb', 'aria-hidden': 'true' });
      paintInto(canvas, all.subarray(h * m * m, (h + 1) * m * m), m, m, range, lut);
      sizeCanvasCss(canvas, 112);
      const open = el(
        'button',
        {
          type: 'button',
          class: 'open',
          'data-head': String(h),
          'aria-label': `Open head ${h} of ${shape ? layerLabel(shape, layer) : `layer ${layer}`}`,
        },
        [canvas, el('span', {}, [`${shape ? layerShort(shape, layer) : `L${layer}`} · head ${h}`])],
      );
      open.addEventListener('click', () => update({ head: h, view: 'heatmap' }));
      const tick = el('input', { type: 'checkbox', class: 'cmp', 'data-head': String(h), 'aria-label': `Compare head ${h}` });
      tick.checked = state.compare.includes(h);
      tick.addEventListener('change', () => {
        toggleCompareHead(h);
        const compare = $viewState.get()?.compare ?? [];
        for (const c of document.querySelectorAll<HTMLInputElement>('#head-grid input.cmp'))
          c.checked = compare.includes(Number(c.dataset.head));
        void this.compare.render();
      });
      const cell = el('div', { class: h === state.head ? 'head-cell current' : 'head-cell', 'data-head': String(h) }, [
        open,
        el('label', { class: 'meta' }, [tick, ' compare']),
      ]);
      cells.push(cell);
    }
    box.replaceChildren(...cells);
    await this.compare.render();
  }

  private renderOverview(ov: OverviewResponse): void {
    const state = $viewState.get();
    if (!state || !$init.get()) return;
    const L = ov.layers.length;
    const H = ov.heads;
    const values = fromBuffer(ov.data, L * H);
    // The heads' own span, not 0 to max: mean entropies of 4.5–5.6 nats would otherwise all be one yellow.
    const span = valueRange(values, false);
    const lo = values.reduce((a, v) => (Number.isFinite(v) && v < a ? v : a), span.max);
    const range: Range = { min: lo < span.max ? lo : 0, max: span.max, signed: false };
    const lut = makeLut('viridis', false);
    const canvas = $<HTMLCanvasElement>('#overview');
    paintInto(canvas, values, L, H, range, lut);
    const cell = Math.max(8, Math.min(28, Math.floor(520 / Math.max(H, 1))));
    canvas.style.width = `${H * cell}px`;
    canvas.style.height = `${L * cell}px`;
    $('#overview-box').replaceChildren(
      withAxisLabels(
        canvas,
        ov.layers.map((l) => `L${l}`),
        Array.from({ length: H }, (_, h) => `H${h}`),
        cell,
        { rows: 'layer', cols: 'head' },
      ),
    );
    const li = ov.layers.indexOf(state.layer);
    const what = ov.metric === 'entropy' ? 'mean attention entropy (nats; dark = focused heads)' : `mean |${ov.kind}|`;
    $('#overview-caption').textContent =
      `Rows: layers ${ov.layers[0]}–${ov.layers[L - 1]}; columns: heads 0–${H - 1}; colour: ${what}, ${formatValue(range.min)} to ${formatValue(range.max)}. Current: layer ${state.layer}, head ${state.head} = ${li >= 0 ? formatValue(values[li * H + state.head] ?? NaN) : '–'}.`;
  }
}
