// "Side by side" under the head grid: the ticked heads of one layer on one colour range, beside each other, each
// a heatmap with token labels on both axes, one legend over them, and the hover's row, column and cell outlined
// on each.
import { layerLabel } from '../../../src/shared/emd-layers';
import { isSignedKind } from '../../../src/shared/kinds';
import { pieceLabel } from '../../../src/shared/token-layout';
import { describeRange, lutFor } from '../../common/colors';
import { columnsFor, mapSide } from '../../common/axis-ticks';
import { wordLabels } from '../../common/figure-labels';
import { Heatmap } from '../../common/heatmap';
import { paintRamp } from '../../common/legend-bar';
import { effectiveScaling, mapValues } from '../../../src/shared/row-scale';
import { $, el, themeKind } from '../../common/dom';
import { refreshHover, setHover, togglePin } from '../state/actions';
import { legendEnd } from '../../common/legend-bar';
import { $comparePanes, $hover, $init, $viewState, type ComparePane } from '../state/store';
import { $comparePicture } from '../state/picture';
import type { MatrixRequests } from './requests';

export function sizeCanvasCss(canvas: HTMLCanvasElement, px: number): void {
  canvas.style.width = `${px}px`;
  canvas.style.height = `${px}px`;
}

export class CompareHeads {
  /** The panes on screen, each a heatmap with both axes labelled; the hover outlines follow the store. */
  private maps: Heatmap[] = [];

  constructor(private readonly requests: MatrixRequests) {
    $hover.listen(({ i, j }) => {
      if (!$viewState.get() || !$init.get()) return;
      for (const m of this.maps) m.setHover(i, j);
    });
    // The panes share the panel's width: a resized panel lays them out again (once the resize settles).
    let timer: ReturnType<typeof setTimeout> | undefined;
    window.addEventListener('resize', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (this.maps.length && !document.getElementById('heads-view')?.hidden) void this.render();
      }, 150);
    });
  }

  /** Kept for the renderer's theme pass: each pane reads the theme when it is drawn. */
  readTheme(): void {
    for (const m of this.maps) m.readTheme();
  }

  async render(): Promise<void> {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const heads = [...state.compare].sort((a, b) => a - b);
    const box = $('#compare');
    this.maps = [];
    $comparePanes.set([]);
    $comparePicture.set(undefined);
    if (heads.length < 2) {
      box.replaceChildren();
      $('#compare-hint').hidden = false;
      return;
    }
    $('#compare-hint').hidden = true;
    const { layer, term } = state;
    const slices = await Promise.all(heads.map((h) => this.requests.slice(layer, h, term)));
    const now = $viewState.get();
    if (!now || now.layer !== layer || now.term !== term) return;
    const n = init.tokens.length;
    const signed = isSignedKind(term);
    // One robust range over every compared head, so equal colours mean equal values across panes.
    const joined = new Float32Array(slices.reduce((a, s) => a + s.length, 0));
    slices.reduce((at, s) => (joined.set(s, at), at + s.length), 0);
    const { shown, range } = mapValues(joined, heads.length * n, n, signed, effectiveScaling(now.scaling, signed));
    const lut = lutFor(now.colorScale, range, themeKind());
    const cols = paneColumns(box.clientWidth || document.body.clientWidth - 28, heads.length, PANE_AXES.left);
    const side = paneSide(box.clientWidth || document.body.clientWidth - 28, cols, PANE_AXES.left, n);
    const words = wordLabels(init.text, init.tokens);
    const labels = init.tokens.map((t) => (t.special ? t.text : pieceLabel(t.text)));
    const label = layerLabel(init.model, layer);
    const panes: ComparePane[] = [];
    const figures = heads.flatMap((h, k) => {
      const values = slices[k];
      if (!values) return [];
      const map = new Heatmap(
        {
          hover: (i, j) => setHover(i, j, false),
          click: () => {
            const { i, j } = $hover.get();
            if (i !== null) togglePin(i, j);
          },
        },
        PANE_AXES,
      );
      for (const e of map.root.querySelectorAll<HTMLElement>('[id]')) e.id = `${e.id}-h${h}`;
      map.canvas.classList.add('compare-canvas');
      map.canvas.dataset.head = String(h);
      map.canvas.setAttribute('aria-label', `${label} head ${h} ${term}: rows are queries, columns are keys`);
      panes.push({ head: h, values });
      this.maps.push(map);
      const figure = el('figure', { class: 'compare-pane', 'data-head': String(h) }, [
        el('figcaption', {}, [`${label} · head ${h}`]),
        map.root,
      ]);
      return [{ figure, map, values: shown.subarray(k * n * n, (k + 1) * n * n) }];
    });
    $comparePanes.set(panes);
    $comparePicture.set({
      layer,
      term,
      heads: figures.map((f) => Number(f.figure.dataset.head)),
      shown: figures.map((f) => f.values),
      n,
      range,
      lut,
    });
    const legend = el('div', { class: 'legend compare-legend' }, [
      el('span', { class: 'legend-scale' }, [
        el('span', {}, [legendEnd(range, 'min')]),
        legendBar(lut),
        el('span', {}, [legendEnd(range, 'max')]),
      ]),
      el('span', { class: 'meta' }, [`${describeRange(range, term)} · one range over the ${heads.length} heads`]),
    ]);
    box.replaceChildren(
      legend,
      el(
        'div',
        { class: 'compare-row' },
        figures.map((f) => f.figure),
      ),
    );
    for (const f of figures) {
      f.map.readTheme();
      f.map.set({ values: f.values, n, range, lut, labels, words }, side);
    }
    refreshHover();
  }
}

/** The pane's axes: narrower than the single head's, so two fit beside each other in a side panel. */
const PANE_AXES = { left: 64, top: 52, overhang: 18 };
const PANE_GAP = 14;
/** px right of a pane that its slanted column labels use, and the zoom row's height. */
const PANE_EXTRA = 18;

function paneColumns(width: number, count: number, axisLeft: number): number {
  return columnsFor(width, count, { each: axisLeft + PANE_EXTRA, gap: PANE_GAP, min: 120 });
}

/** Side of each pane's map in px: the row's width shared by `cols` panes, less their axes; whole px per cell. */
export function paneSide(width: number, cols: number, axisLeft: number, n: number): number {
  const each = Math.floor((width - PANE_GAP * (cols - 1)) / cols) - axisLeft - PANE_EXTRA;
  return mapSide({ width: each, height: Math.max(240, window.innerHeight - 140), n, min: 100, max: 900 });
}

function legendBar(lut: Uint8ClampedArray): HTMLCanvasElement {
  const bar = el('canvas', { width: '256', height: '1', class: 'legend-ramp', 'aria-hidden': 'true' });
  paintRamp(bar, lut);
  return bar;
}
