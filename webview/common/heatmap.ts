// The single-head heatmap: the matrix in a fixed-size square with token labels on both axes, zoom and pan
// (wheel, drag, + − 0 keys), a minimap in the corner while zoomed, and the hover overlay. Nothing here changes
// size on hover, so the cell under a still pointer stays the cell under it.
import { paintMatrix, paintSteps } from './colors';
import type { Pooling } from '../../src/shared/heatmap-picture';
import { type Range } from '../../src/shared/value-range';
import { el } from './dom';
import { axisTicks } from './axis-ticks';
import { fitText } from './matrix-axes';
import { cellIn, centreOn, fit, labelStride, pan, reveal, zoomAt, ZOOM_STEP, type Viewport } from './viewport';

export interface HeatmapMatrix {
  values: Float32Array;
  n: number;
  range: Range;
  lut: Uint8ClampedArray;
  /** Axis label of each row/column (token or word). */
  labels: string[];
  /** The whole word on each word's first row, '' on its later pieces: thinned axes label word starts only. */
  words?: string[];
}

/**
 * A long input's map as colour-ramp steps pooled to `side` pixels a side (src/shared/heatmap-picture.ts): the
 * view draws those pixels; zoomed in past them, it asks for every cell (`HeatmapEvents.detail`).
 */
export interface HeatmapPicture {
  steps: Uint8Array;
  side: number;
  n: number;
  range: Range;
  pooling: Pooling;
  lut: Uint8ClampedArray;
  labels: string[];
  words?: string[];
}

export interface HeatmapEvents {
  hover(i: number | null, j: number | null): void;
  click(): void;
  /** Zoomed in past a pooled picture's pixels: the view may send the map with every cell (setPicture again). */
  detail?(): void;
}

/** Room for the axis labels (px), when a small map needs less than the single head's. */
export interface HeatmapAxes {
  left?: number;
  top?: number;
  /** px right of the map that the slanted column labels may use. */
  overhang?: number;
}

const AXIS_LEFT = 84; // px: room for a ~10-character token label
const AXIS_TOP = 64;

/** px the slanted column labels run past the map's right edge (so the last one, "[SEP]", is not cut). */
const TOP_OVERHANG = 30;

/** Label strides people count in: 1, 2, 5, 10, 20, 50, … */
function niceStride(k: number): number {
  for (let p = 1; ; p *= 10) for (const m of [1, 2, 5]) if (m * p >= k) return m * p;
}

function shortLabel(s: string): string {
  const t = s.replace(/^[▁Ġ]/u, ' ').replace(/\s/g, ' ').trim() || '␣';
  return t.length > 14 ? `${t.slice(0, 13)}…` : t;
}

export class Heatmap {
  readonly root: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly overlay: HTMLCanvasElement;
  private readonly left: HTMLCanvasElement;
  private readonly top: HTMLCanvasElement;
  private readonly corner: HTMLCanvasElement;
  private readonly cornerText: HTMLElement;
  private readonly zoomLabel: HTMLElement;
  /** The whole matrix at one pixel per cell; the view draws a window of it scaled up. */
  private readonly full = document.createElement('canvas');
  private m: Omit<HeatmapMatrix, 'values'> | undefined;
  /** Pixels a side of `full` (n, or a pooled picture's side). */
  private px = 0;
  private vp: Viewport = fit(0);
  private size = 0;
  private hover: { i: number | null; j: number | null } = { i: null, j: null };
  private colors = { focus: '#007fd4', fg: '#ffffff', label: '#888888', font: 'monospace' };
  private drag: { x: number; y: number; vp: Viewport; moved: boolean } | undefined;
  /** The view was asked once for this map's every cell. */
  private detailAsked = false;
  /** How the picture on screen pools its cells (for the zoom label). */
  private pooling: Pooling = 'max';

  private readonly axisL: number;
  private readonly axisT: number;
  private readonly overhang: number;

  constructor(
    private readonly events: HeatmapEvents,
    axes: HeatmapAxes = {},
  ) {
    this.axisL = axes.left ?? AXIS_LEFT;
    this.axisT = axes.top ?? AXIS_TOP;
    this.overhang = axes.overhang ?? TOP_OVERHANG;
    this.canvas = el('canvas', {
      id: 'heatmap',
      tabindex: '0',
      role: 'img',
      'aria-label': 'Attention heatmap: rows are queries, columns are keys. Arrow keys move, Enter pins, + and − zoom, 0 fits.',
    });
    this.overlay = el('canvas', { id: 'heatmap-overlay', 'aria-hidden': 'true' });
    this.left = el('canvas', { id: 'axis-left', class: 'axis', 'aria-hidden': 'true' });
    this.top = el('canvas', { id: 'axis-top', class: 'axis', 'aria-hidden': 'true' });
    this.corner = el('canvas', {
      id: 'minimap',
      title: 'Whole matrix; the box is what the heatmap shows. Click to move there.',
      hidden: '',
    });
    this.cornerText = el('span', { class: 'axis-corner-text meta' }, ['keys →', el('br'), 'queries ↓']);
    this.zoomLabel = el('span', { id: 'zoom-label', class: 'meta' }, ['fit']);
    const zoomBtn = (id: string, label: string, title: string, f: () => void) => {
      const b = el('button', { id, type: 'button', title, 'aria-label': title }, [label]);
      b.addEventListener('click', f);
      return b;
    };
    const zoom = el('span', { class: 'group zoom', role: 'group', 'aria-label': 'Zoom' }, [
      zoomBtn('zoom-out', '−', 'Zoom out (−, wheel down)', () => this.zoomBy(1 / ZOOM_STEP)),
      zoomBtn('zoom-in', '+', 'Zoom in (+, wheel up over the map)', () => this.zoomBy(ZOOM_STEP)),
      zoomBtn('zoom-fit', 'Fit', 'Show the whole matrix (0)', () => this.setViewport(fit(this.vp.n))),
      this.zoomLabel,
    ]);
    this.root = el('div', { class: 'heatmap-grid' }, [
      el('div', { class: 'axis-corner' }, [this.cornerText, this.corner]),
      this.top,
      this.left,
      el('div', { class: 'heatmap-wrap' }, [this.canvas, this.overlay]),
    ]);
    this.root.prepend(el('div', { class: 'heatmap-zoom' }, [zoom]));
    this.wire();
  }

  /** Theme colours for labels and overlays, read once per render (getComputedStyle per mouse move is costly). */
  readTheme(): void {
    const style = getComputedStyle(document.body);
    const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    this.colors = {
      focus: v('--vscode-focusBorder', '#007fd4'),
      fg: v('--vscode-editor-foreground', '#ffffff'),
      label: v('--vscode-descriptionForeground', '#888888'),
      font: v('--vscode-editor-font-family', 'monospace'),
    };
  }

  /** Shows a matrix: a new size fits the view, the same size keeps the zoom (switching term, layer or head). */
  set(m: HeatmapMatrix, size: number): void {
    this.show(m, m.n, (img) => paintMatrix(m.values, m.range, m.lut, img.data), size);
  }

  /** Shows a map sent as steps (pooled or not): each step's colour from the LUT, one pixel each. */
  setPicture(p: HeatmapPicture, size: number): void {
    this.pooling = p.pooling;
    this.show(p, p.side, (img) => paintSteps(p.steps, p.lut, img.data), size);
  }

  /** Whether the map on screen is pooled (fewer pixels than cells a side). */
  get pooled(): boolean {
    return !!this.m && this.px < this.m.n;
  }

  private show(m: Omit<HeatmapMatrix, 'values'>, px: number, paint: (img: ImageData) => void, size: number): void {
    const resized = !this.m || this.m.n !== m.n;
    this.m = m;
    this.px = px;
    this.full.width = px;
    this.full.height = px;
    const ctx = this.full.getContext('2d');
    if (ctx && px > 0) {
      const img = ctx.createImageData(px, px);
      paint(img);
      ctx.putImageData(img, 0, 0);
    }
    this.detailAsked = false;
    if (resized) this.vp = fit(m.n);
    this.size = size;
    this.layout();
    this.draw();
    // A counter the UI bench and tests wait on: one more matrix painted.
    this.canvas.dataset.painted = String(Number(this.canvas.dataset.painted ?? 0) + 1);
    this.canvas.dataset.pixels = String(px);
    performance.mark('lens-painted');
  }

  /** A new side in CSS px (the panel was resized): the same matrix and zoom, laid out and drawn again. */
  resize(size: number): void {
    if (!this.m || size === this.size) return;
    this.size = size;
    this.layout();
    this.draw();
  }

  get axisLeft(): number {
    return this.axisL;
  }

  /** px of the page right of the map that its labels use (less than the page's padding can lend). */
  get topOverhang(): number {
    return this.overhang - 14;
  }

  get side(): number {
    return this.size;
  }

  /** Where the matrix starts, in page pixels from the top: the root's top plus the zoom row and the column labels. */
  canvasTop(): number {
    const zoomRow = this.root.querySelector<HTMLElement>('.heatmap-zoom')?.offsetHeight ?? 0;
    return this.root.getBoundingClientRect().top + window.scrollY + zoomRow + this.axisT;
  }

  get viewport(): Viewport {
    return this.vp;
  }

  private layout(): void {
    const dpr = window.devicePixelRatio || 1;
    const px = (c: HTMLCanvasElement, w: number, h: number) => {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${h}px`;
    };
    px(this.canvas, this.size, this.size);
    // At least one backing pixel per cell: a map drawn smaller than n pixels would drop whole rows and columns
    // (a one-cell peak could vanish); the browser scales the full map down instead.
    const n = this.px;
    const down = this.canvas.width < n;
    if (down) this.canvas.width = this.canvas.height = n;
    // Shrinking by nearest neighbour drops cells again: let the browser average them when the map is that small.
    this.canvas.style.imageRendering = down ? 'auto' : '';
    px(this.overlay, this.size, this.size);
    px(this.left, this.axisL, this.size);
    px(this.top, this.size + this.overhang, this.axisT);
    px(this.corner, Math.min(this.axisL, this.axisT) - 4, Math.min(this.axisL, this.axisT) - 4);
    this.root.style.setProperty('--axis-left', `${this.axisL}px`);
    this.root.style.setProperty('--axis-top', `${this.axisT}px`);
    this.canvas.dataset.n = String(this.m?.n ?? 0);
  }

  private setViewport(v: Viewport): void {
    if (v.span === this.vp.span && v.r0 === this.vp.r0 && v.c0 === this.vp.c0) return;
    this.vp = v;
    this.draw();
  }

  zoomBy(factor: number, fx = 0.5, fy = 0.5): void {
    this.setViewport(zoomAt(this.vp, factor, fx, fy));
  }

  /** Keeps the cell under the keyboard cursor on screen. */
  reveal(i: number, j: number | null): void {
    this.setViewport(reveal(this.vp, i, j));
  }

  draw(): void {
    const m = this.m;
    const ctx = this.canvas.getContext('2d');
    if (!m || !ctx) return;
    const { span, r0, c0 } = this.vp;
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    // `full` has px pixels for n cells: the window in its pixels.
    const k = this.px / m.n;
    if (m.n > 0) ctx.drawImage(this.full, c0 * k, r0 * k, span * k, span * k, 0, 0, this.canvas.width, this.canvas.height);
    const zoomed = span < m.n;
    const k2 = Math.ceil(m.n / this.px);
    const pooled =
      this.px >= m.n
        ? ''
        : this.pooling === 'sum'
          ? ` · 1 px = ${k2} × ${k2} cells: keys summed, top query`
          : ` · 1 px = ${k2} × ${k2} cells: the strongest`;
    this.zoomLabel.textContent = zoomed
      ? `×${(m.n / span).toFixed(1)} · rows ${r0}–${r0 + span - 1}${pooled && ' · more detail coming'}`
      : `fit${pooled}`;
    this.zoomLabel.title = !pooled
      ? ''
      : this.pooling === 'sum'
        ? `Each pixel pools ${k2} × ${k2} cells: each query's weights summed over the ${k2} keys (its attention to that key group, on its row's scale over the groups), and the largest of the ${k2} queries. Zoom in for every cell.`
        : `Each pixel shows the strongest of its ${k2} × ${k2} cells (signed terms: the farthest from 0). Zoom in for every cell.`;
    // Zoomed past the pooled pixels (the window has fewer of them than the screen has): every cell is asked for once.
    if (zoomed && this.px < m.n && span * k < this.canvas.width && !this.detailAsked) {
      this.detailAsked = true;
      this.events.detail?.();
    }
    this.corner.hidden = !zoomed;
    this.cornerText.hidden = zoomed;
    this.drawAxes();
    if (zoomed) this.drawMinimap();
    this.drawOverlay();
  }

  private drawAxes(): void {
    const m = this.m;
    if (!m) return;
    const dpr = window.devicePixelRatio || 1;
    const cellPx = this.size / this.vp.span;
    // Word labels go at word starts anyway (no round numbers to keep): as dense as they fit.
    const stride = m.words ? labelStride(cellPx, 12) : niceStride(labelStride(cellPx, 12));
    const font = Math.max(9, Math.min(12, Math.floor(cellPx) - 1));
    let count = 0;
    for (const [c, vertical] of [
      [this.left, false],
      [this.top, true],
    ] as const) {
      const g = c.getContext('2d');
      if (!g) continue;
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, c.width, c.height);
      g.font = `${font}px ${this.colors.font}`;
      g.fillStyle = this.colors.label;
      g.strokeStyle = this.colors.label;
      g.textBaseline = 'middle';
      g.textAlign = 'right';
      const start = vertical ? this.vp.c0 : this.vp.r0;
      for (const k of axisTicks(m.words, start, this.vp.span, stride)) {
        // Labels of the first and last rows stay whole inside the axis, even when a cell is a pixel high.
        const at = Math.min(this.size - font / 2, Math.max(font / 2, (k - start + 0.5) * cellPx));
        const text = stride === 1 ? shortLabel(m.labels[k] ?? '') : `${k} ${shortLabel(m.words?.[k] || (m.labels[k] ?? ''))}`;
        if (vertical) {
          g.save();
          g.translate(at, this.axisT - 4);
          g.rotate(-Math.PI / 3);
          g.textAlign = 'left';
          g.fillText(fitText(g, text, (this.axisT - 8) / Math.sin(Math.PI / 3)), 4, 0);
          g.restore();
          g.fillRect(at - 0.5, this.axisT - 3, 1, 3);
        } else {
          g.fillText(fitText(g, text, this.axisL - 8), this.axisL - 6, at);
          g.fillRect(this.axisL - 3, at - 0.5, 3, 1);
        }
        count++;
      }
    }
    this.root.dataset.labels = String(count);
    this.root.dataset.labelStride = String(stride);
  }

  private drawMinimap(): void {
    const g = this.corner.getContext('2d');
    const m = this.m;
    if (!g || !m) return;
    const w = this.corner.width;
    g.imageSmoothingEnabled = true;
    g.clearRect(0, 0, w, w);
    g.drawImage(this.full, 0, 0, w, w);
    const s = w / m.n;
    g.lineWidth = Math.max(1, window.devicePixelRatio || 1);
    g.strokeStyle = this.colors.focus;
    g.strokeRect(this.vp.c0 * s + 0.5, this.vp.r0 * s + 0.5, Math.max(2, this.vp.span * s - 1), Math.max(2, this.vp.span * s - 1));
  }

  /** The query row, key column and cell under inspection. */
  setHover(i: number | null, j: number | null): void {
    this.hover = { i, j };
    this.drawOverlay();
  }

  private drawOverlay(): void {
    const ctx = this.overlay.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const { i, j } = this.hover;
    if (i === null || !this.m) return;
    const { span, r0, c0 } = this.vp;
    const cell = this.overlay.width / span;
    const dpr = window.devicePixelRatio || 1;
    const y = (i - r0) * cell;
    ctx.lineWidth = Math.max(1, dpr);
    ctx.strokeStyle = this.colors.focus;
    if (i >= r0 && i < r0 + span) ctx.strokeRect(0.5, y + 0.5, this.overlay.width - 1, Math.max(1, cell - 1));
    if (j !== null && j >= c0 && j < c0 + span) {
      const x = (j - c0) * cell;
      ctx.setLineDash([4, 3]);
      ctx.strokeRect(x + 0.5, 0.5, Math.max(1, cell - 1), this.overlay.height - 1);
      ctx.setLineDash([]);
      ctx.lineWidth = Math.max(2, 2 * dpr);
      ctx.strokeStyle = this.colors.fg;
      ctx.strokeRect(x, y, Math.max(2, cell), Math.max(2, cell));
    }
  }

  private cellAtEvent(e: MouseEvent): { i: number; j: number } | null {
    const rect = this.canvas.getBoundingClientRect();
    return cellIn(this.vp, e.clientX - rect.left, e.clientY - rect.top, rect.width);
  }

  private wire(): void {
    const c = this.canvas;
    c.addEventListener('mousemove', (e) => {
      if (this.drag) {
        const cell = this.size / this.vp.span;
        const dx = Math.round((this.drag.x - e.clientX) / cell);
        const dy = Math.round((this.drag.y - e.clientY) / cell);
        if (dx || dy) this.drag.moved = true;
        this.setViewport(pan(this.drag.vp, dy, dx));
        return;
      }
      const at = this.cellAtEvent(e);
      if (at) this.events.hover(at.i, at.j);
    });
    c.addEventListener('mouseleave', () => {
      this.drag = undefined;
      this.events.hover(null, null);
    });
    c.addEventListener('mousedown', (e) => {
      if (e.button === 0 && this.vp.span < this.vp.n) this.drag = { x: e.clientX, y: e.clientY, vp: this.vp, moved: false };
    });
    c.addEventListener('mouseup', () => {
      const moved = this.drag?.moved;
      this.drag = undefined;
      if (!moved) this.events.click();
    });
    // Wheel up zooms in around the pointer; wheel down zooms out, and once the whole matrix shows, scrolls the page.
    c.addEventListener(
      'wheel',
      (e) => {
        if (!this.m) return;
        if (e.shiftKey && this.vp.span < this.vp.n) {
          e.preventDefault();
          this.setViewport(pan(this.vp, 0, Math.sign(e.deltaY || e.deltaX) * Math.max(1, Math.round(this.vp.span / 10))));
          return;
        }
        if (e.deltaY > 0 && this.vp.span >= this.vp.n) return;
        e.preventDefault();
        const rect = c.getBoundingClientRect();
        this.zoomBy(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, (e.clientX - rect.left) / rect.width, (e.clientY - rect.top) / rect.height);
        const at = this.cellAtEvent(e);
        if (at) this.events.hover(at.i, at.j);
      },
      { passive: false },
    );
    c.addEventListener('keydown', (e) => {
      if (e.key === '+' || e.key === '=') this.zoomBy(ZOOM_STEP);
      else if (e.key === '-' || e.key === '_') this.zoomBy(1 / ZOOM_STEP);
      else if (e.key === '0') this.setViewport(fit(this.vp.n));
      else return;
      e.preventDefault();
      e.stopPropagation();
    });
    this.corner.addEventListener('click', (e) => {
      const rect = this.corner.getBoundingClientRect();
      const n = this.vp.n;
      this.setViewport(centreOn(this.vp, ((e.clientY - rect.top) / rect.height) * n, ((e.clientX - rect.left) / rect.width) * n));
    });
  }
}
