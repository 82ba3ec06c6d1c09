// "Side by side" under the head grid: the ticked heads of one layer on one colour range, with the hover's row,
// column and cell outlined on each.
import { cellAt } from '../../../src/shared/hover';
import { isSignedKind } from '../../../src/shared/kinds';
import { lutFor } from '../../common/colors';
import { effectiveScaling, mapValues } from '../../common/row-scale';
import { $, el, themeKind } from '../../common/dom';
import { paintInto } from '../../common/paint-canvas';
import { refreshHover, setHover, togglePin } from '../state/actions';
import { $comparePanes, $hover, $init, $viewState, type ComparePane } from '../state/store';
import type { MatrixRequests } from './requests';

export function sizeCanvasCss(canvas: HTMLCanvasElement, px: number): void {
  canvas.style.width = `${px}px`;
  canvas.style.height = `${px}px`;
}

export class CompareHeads {
  /** Theme colours for the overlays, read once per render (getComputedStyle on every mouse move is costly). */
  private colors = { focus: '#007fd4', fg: '#ffffff' };
  /** The hover outlines over the panes on screen. */
  private overlays: HTMLCanvasElement[] = [];

  constructor(private readonly requests: MatrixRequests) {
    $hover.listen(({ i, j }) => {
      const init = $init.get();
      if (!$viewState.get() || !init) return;
      for (const o of this.overlays) this.drawOverlay(o, init.tokens.length, i, j);
    });
  }

  readTheme(): void {
    const style = getComputedStyle(document.body);
    this.colors = {
      focus: style.getPropertyValue('--vscode-focusBorder').trim() || '#007fd4',
      fg: style.getPropertyValue('--vscode-editor-foreground').trim() || '#ffffff',
    };
  }

  async render(): Promise<void> {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const heads = [...state.compare].sort((a, b) => a - b);
    const box = $('#compare');
    this.overlays = [];
    $comparePanes.set([]);
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
    const px = Math.max(n, Math.floor(Math.min(360, (document.body.clientWidth - 48) / Math.min(heads.length, 3))));
    const dpr = window.devicePixelRatio || 1;
    const panes: ComparePane[] = [];
    const overlays: HTMLCanvasElement[] = [];
    const figures = heads.flatMap((h, k) => {
      const values = slices[k];
      if (!values) return [];
      const canvas = el('canvas', {
        class: 'compare-canvas',
        'data-head': String(h),
        'aria-label': `Layer ${layer} head ${h} ${term}`,
        role: 'img',
      });
      paintInto(canvas, shown.subarray(k * n * n, (k + 1) * n * n), n, n, range, lut);
      sizeCanvasCss(canvas, px);
      const overlay = el('canvas', { class: 'compare-overlay', 'aria-hidden': 'true' });
      overlay.width = Math.round(px * dpr);
      overlay.height = Math.round(px * dpr);
      sizeCanvasCss(overlay, px);
      canvas.addEventListener('mousemove', (e) => {
        const rect = canvas.getBoundingClientRect();
        const c = cellAt(e.clientX - rect.left, e.clientY - rect.top, rect.width, n);
        if (c) setHover(c.i, c.j);
      });
      canvas.addEventListener('mouseleave', () => setHover(null, null));
      canvas.addEventListener('click', () => {
        const { i, j } = $hover.get();
        if (i !== null) togglePin(i, j);
      });
      panes.push({ head: h, values });
      overlays.push(overlay);
      return el('figure', { class: 'compare-pane', 'data-head': String(h) }, [
        el('div', { class: 'heatmap-wrap' }, [canvas, overlay]),
        el('figcaption', { class: 'meta' }, [`Layer ${layer} · head ${h}`]),
      ]);
    });
    this.overlays = overlays;
    $comparePanes.set(panes);
    box.replaceChildren(...figures);
    refreshHover();
  }

  private drawOverlay(overlay: HTMLCanvasElement, n: number, i: number | null, j: number | null): void {
    const ctx = overlay.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, overlay.width, overlay.height);
    if (i === null || n === 0) return;
    const cell = overlay.width / n;
    const { focus, fg } = this.colors;
    ctx.lineWidth = Math.max(1, window.devicePixelRatio || 1);
    ctx.strokeStyle = focus;
    ctx.strokeRect(0.5, i * cell + 0.5, overlay.width - 1, Math.max(1, cell - 1));
    if (j !== null) {
      ctx.setLineDash([4, 3]);
      ctx.strokeRect(j * cell + 0.5, 0.5, Math.max(1, cell - 1), overlay.height - 1);
      ctx.setLineDash([]);
      ctx.lineWidth = Math.max(2, 2 * (window.devicePixelRatio || 1));
      ctx.strokeStyle = fg;
      ctx.strokeRect(j * cell, i * cell, Math.max(2, cell), Math.max(2, cell));
    }
  }
}
