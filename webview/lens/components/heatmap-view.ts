// The Heatmap tab: one head (or the heads' mean or max, specials discounted, words merged) as a large map with
// its hover overlay and keyboard cursor.
import { layerLabel } from '../../../src/shared/emd-layers';
import { isSignedKind } from '../../../src/shared/kinds';
import { fromBuffer, type PictureResponse, type WordsResponse } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { lutFor } from '../../common/colors';
import { effectiveScaling, mapValues } from '../../../src/shared/row-scale';
import { $, themeKind } from '../../common/dom';
import { Heatmap } from '../../common/heatmap';
import { mapSide } from '../../common/axis-ticks';
import { wordLabels } from '../../common/figure-labels';
import { paintRequest, pictureRequests, sliceValues } from '../state/slice-fetch';
import { pictureSide } from '../../../src/shared/heatmap-picture';
import { HOVER_TOP_K } from './hover';
import { withExactExtent, type Range } from '../../../src/shared/value-range';
import { mergeCaption } from '../views/view-captions';
import { pin, setHover, togglePin } from '../state/actions';
import { $current, $hover, $init, $merged, $viewState, shownKey } from '../state/store';
import { appendLegendLabel, renderLegend } from './legend';
import type { MatrixRequests } from './requests';

/** ms on a picture before its rows' hover neighbours are asked for. */
const TOPS_AFTER_MS = 250;

/** px of panel from which the text and readout sit beside the map instead of above it. */
const WIDE_PANEL = 900;

export class HeatmapView {
  readonly heatmap: Heatmap;

  constructor(private readonly requests: MatrixRequests) {
    this.heatmap = new Heatmap({
      hover: (i, j) => setHover(i, j, false),
      click: () => {
        const { i, j } = $hover.get();
        if (i !== null) togglePin(i, j);
      },
      detail: () => this.detail(),
    });
    this.heatmap.canvas.addEventListener('keydown', (e) => this.key(e));
    this.followResize();
    $hover.listen(({ i, j }) => {
      if ($viewState.get() && $init.get()) this.heatmap.setHover(i, j);
    });
  }

  private key(e: KeyboardEvent): void {
    const init = $init.get();
    if (!init) return;
    const pinned = $viewState.get()?.pinned ?? null;
    const hover = $hover.get();
    const n = $current.get()?.n ?? init.tokens.length;
    let i = hover.i ?? pinned ?? 0;
    let j = hover.j ?? 0;
    if (e.key === 'ArrowDown') i = Math.min(n - 1, i + 1);
    else if (e.key === 'ArrowUp') i = Math.max(0, i - 1);
    else if (e.key === 'ArrowRight') j = Math.min(n - 1, j + 1);
    else if (e.key === 'ArrowLeft') j = Math.max(0, j - 1);
    else if (e.key === 'Enter' || e.key === ' ') {
      togglePin(i, j);
      e.preventDefault();
      return;
    } else return;
    e.preventDefault();
    this.heatmap.reveal(i, j);
    if (pinned !== null) pin(i, j);
    else setHover(i, j);
  }

  /** Side of the heatmap in CSS px: the free width of the panel less the row labels, and above the fold. */
  private px(n: number): number {
    // A wide panel puts the text and the readout beside the map (lens.css), so the map can take the height.
    const app = document.getElementById('app');
    if (app) app.toggleAttribute('data-wide', document.body.clientWidth >= WIDE_PANEL);
    const section = document.getElementById('heatmap-view');
    const width = (section?.clientWidth || document.body.clientWidth - 32) - this.heatmap.axisLeft - this.heatmap.topOverhang;
    const height = window.innerHeight - this.heatmap.canvasTop() - 8;
    return mapSide({ width, height, n });
  }

  /** The panel changed size: the same map, sized again (after the resize settles). */
  private followResize(): void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    window.addEventListener('resize', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const cur = $current.get();
        if (cur && !$('#heatmap-view').hidden) this.heatmap.resize(this.px(cur.n));
      }, 100);
    });
  }

  private axes: { tokens: object; pieces: string[]; words: string[] } | undefined;

  /** The axis labels of the result shown: each token's piece, and its word on its first piece ('' on the others). */
  private axesOf(text: string, tokens: Parameters<typeof wordLabels>[1]): { pieces: string[]; words: string[] } {
    if (this.axes?.tokens !== tokens)
      this.axes = { tokens, pieces: tokens.map((t) => (t.special ? t.text : pieceLabel(t.text))), words: wordLabels(text, tokens) };
    return this.axes;
  }

  async render(isCurrent: () => boolean): Promise<void> {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const { layer, head, term } = state;
    let values: Float32Array;
    let aggKey = '';
    let words: WordsResponse | undefined;
    let extent: [number, number] | undefined;
    if (state.merge) {
      words = await this.requests.request({ type: 'words', layer, head: state.headAgg ?? head, kind: term, mode: state.merge });
      values = fromBuffer(words.data, words.n * words.n);
      aggKey = `|words:${state.merge}|${state.headAgg ?? head}`;
    } else if (state.headAgg || (!!state.discountSpecial && term === 'probs')) {
      const pick = state.headAgg ?? head;
      const discount = !!state.discountSpecial && term === 'probs';
      const r = await this.requests.request({ type: 'aggregate', layer, head: pick, kind: term, discountSpecial: discount });
      values = fromBuffer(r.data, r.n * r.n);
      aggKey = `|${pick}|${discount}`;
    } else {
      // More cells than the screen has pixels: the host sends the map pooled to the screen's side.
      const side = this.sideFor(init.tokens.length);
      if (side < init.tokens.length) return this.renderPicture(isCurrent, side);
      const r = await this.requests.request(paintRequest(layer, head, term));
      values = sliceValues(r);
      extent = r.extent;
    }
    if (!isCurrent()) return;
    $merged.set(words?.groups);
    const n = words ? words.n : init.tokens.length;
    const signed = isSignedKind(term);
    const mapped = mapValues(values, n, n, signed, effectiveScaling(state.scaling, signed));
    const shown = mapped.shown;
    const range = withExactExtent(mapped.range, extent);
    const lut = lutFor(state.colorScale, range, themeKind());
    $current.set({ values, shown, range, n, key: `${shownKey(layer, head, term)}${aggKey}` });
    const axes = this.axesOf(init.text, init.tokens);
    const labels = words ? words.groups.map((g) => g.text) : axes.pieces;
    this.heatmap.readTheme();
    const wordsShown = words ? labels : axes.words;
    this.heatmap.set({ values: shown, n, range, lut, labels, words: wordsShown }, this.px(n));
    this.described(n, range, lut, words, aggKey);
    if (!aggKey) this.requests.prefetchAround(layer, head, term);
  }

  /** Pixels a side the map's canvas has (CSS px × the device's pixel ratio): a map of more cells comes pooled. */
  private sideFor(n: number): number {
    return pictureSide(n, this.px(n) * (window.devicePixelRatio || 1));
  }

  /** The single head of a long input: its map as steps pooled to the screen (heatmap-picture.ts). */
  private async renderPicture(isCurrent: () => boolean, side: number): Promise<void> {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const { layer, head, term } = state;
    const make = pictureRequests(effectiveScaling(state.scaling, isSignedKind(term)), side);
    // Zoomed in already (a switch keeps the zoom): every cell at once.
    const vp = this.heatmap.viewport;
    const zoomed = vp.n === init.tokens.length && vp.span < vp.n;
    const r = await this.requests.request(zoomed ? { ...make(layer, head, term), side: init.tokens.length } : make(layer, head, term));
    if (!isCurrent()) return;
    $merged.set(undefined);
    this.paintPicture(r);
    this.requests.prefetchAround(layer, head, term, make);
  }

  private paintPicture(r: PictureResponse): void {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const n = r.n;
    const lut = lutFor(state.colorScale, r.range, themeKind());
    const key = shownKey(r.layer, r.head, r.kind);
    $current.set({ range: r.range, n, key });
    const axes = this.axesOf(init.text, init.tokens);
    this.heatmap.readTheme();
    this.heatmap.setPicture(
      {
        steps: new Uint8Array(r.data),
        side: r.side,
        n,
        range: r.range,
        pooling: r.pooling,
        lut,
        labels: axes.pieces,
        words: axes.words,
      },
      this.px(n),
    );
    this.described(n, r.range, lut, undefined, '');
    // Hover neighbours of every row, once the reader stays on the picture a moment (someone stepping through
    // layers would wait for them): the strip then lights at once without the matrix.
    clearTimeout(this.topsTimer);
    const ask = () => {
      const now = $viewState.get();
      // The reader has moved on (the next picture is on its way): not now.
      if ($current.get()?.key !== key || !now || shownKey(now.layer, now.head, now.term) !== key) return;
      // Behind what the view waits for (its matrices fetched ahead may wait: they are a head's run each, ~0.3 s).
      if (this.requests.busy) return void (this.topsTimer = setTimeout(ask, TOPS_AFTER_MS));
      this.requests.hoverTops(r.layer, r.head, r.kind, HOVER_TOP_K);
    };
    this.topsTimer = setTimeout(ask, TOPS_AFTER_MS);
  }

  private topsTimer: ReturnType<typeof setTimeout> | undefined;

  /** The values of the map on screen when it came as a picture (a figure draws every cell): its half slice. */
  async withValues(): Promise<void> {
    const cur = $current.get();
    const state = $viewState.get();
    if (!cur || cur.shown || !state) return;
    const r = await this.requests.request(paintRequest(state.layer, state.head, state.term));
    const values = sliceValues(r);
    const signed = isSignedKind(state.term);
    const mapped = mapValues(values, r.n, r.n, signed, effectiveScaling(state.scaling, signed));
    // The same map may have gained its rows' neighbours meanwhile (a new object, the same key).
    const now = $current.get();
    if (now?.key === cur.key) $current.set({ ...now, values, shown: mapped.shown, range: withExactExtent(mapped.range, r.extent) });
  }

  /** Zoomed in past a pooled map's pixels: the same map with every cell, once. */
  private detail(): void {
    const state = $viewState.get();
    const init = $init.get();
    const cur = $current.get();
    if (!state || !init || !cur || cur.key !== shownKey(state.layer, state.head, state.term)) return;
    const n = init.tokens.length;
    const body = pictureRequests(effectiveScaling(state.scaling, isSignedKind(state.term)), n)(state.layer, state.head, state.term);
    void this.requests
      .request(body)
      .then((r) => {
        const now = $viewState.get();
        if (now && shownKey(now.layer, now.head, now.term) === cur.key && $current.get()?.key === cur.key) this.paintPicture(r);
      })
      .catch(() => undefined);
  }

  /** The caption, the canvas's description and the legend of the map just painted. */
  private described(n: number, range: Range, lut: Uint8ClampedArray, words: WordsResponse | undefined, aggKey: string): void {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const { layer, head, term } = state;
    const mergeCap = $('#merge-caption');
    mergeCap.hidden = !words;
    mergeCap.textContent = words ? mergeCaption(term, words.mode, words.columns, words.n, init.tokens.length) : '';
    const what = `${state.headAgg ? `${state.headAgg} over heads` : `head ${head}`}${aggKey.endsWith('true') ? ', specials discounted' : ''}${words ? `, merged into ${words.mode}` : ''}`;
    this.heatmap.canvas.setAttribute(
      'aria-label',
      `Heatmap of ${term}, ${layerLabel(init.model, layer)}, ${what}: ${n}×${n}, rows are queries, columns are keys. Arrow keys move, Enter pins.`,
    );
    renderLegend(range, lut, term);
    if (aggKey) appendLegendLabel(` · ${what}`);
  }
}
