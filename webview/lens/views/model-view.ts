// The Model tab (bertviz's model view): every layer × head of the current term as a small heatmap; click one to
// open it in the heatmap. Layers are fetched one request at a time as their rows scroll into view (the host
// answers one request at a time, so a queue of layers would hold up the map the reader opens next), and each
// fetched layer is painted once into an offscreen strip; a repaint copies the visible rows' strips.
import { isSignedKind } from '../../../src/shared/kinds';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { lutFor } from '../../common/colors';
import { rampPosition, type Range } from '../../../src/shared/value-range';
import { el, themeKind } from '../../common/dom';
import { paintInto } from '../../common/paint-canvas';
import { effectiveScaling, mapValues } from '../../../src/shared/row-scale';
import { LruCache } from '../../common/cache';
import { openHead } from '../state/actions';
import { $picture } from '../state/picture';
import { onScreen } from '../state/selectors';
import { readout } from './kit';
import { gridGeometry, nextToFetch, thumbAt, thumbCells, visibleLayers } from './model-view-model';
import { paintGrid, type GridScene, type LayerStrip } from './model-view-paint';
import { termButtons } from './term-buttons';
import type { ViewContext } from './view-context';

const SCALING_WORDS: Record<string, string> = {
  'row-log': 'each row on its own log scale',
  row: 'each row to its largest value',
  linear: 'linear between robust limits per layer',
  log: 'log scale, limits per layer',
};

/** Painted layer strips by result, term, cells, scaling, colours and theme: going back to the tab is a repaint. */
const strips = new LruCache<string, LayerStrip>(96);

export async function renderModelView(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const { term } = state;
  const layers = init.model.layers;
  const H = init.model.heads;
  const n = init.tokens.length;
  const avail = Math.max(320, Math.min(document.body.clientWidth - 48, 1100));
  const g = gridGeometry(layers.length, H, avail);
  const m = thumbCells(g.thumb, window.devicePixelRatio || 1, n);
  const signed = isSignedKind(term);
  const scaling = effectiveScaling(state.scaling, signed);
  const theme = themeKind();
  const keyOf = (li: number) => `${init.resultId}|${term}|${m}|${scaling}|${state.colorScale}|${theme}|${layers[li]}`;
  const progress = el('span', { id: 'model-progress', class: 'meta', role: 'status' });
  body.append(
    el('div', { class: 'analysis-controls' }, [
      termButtons('model-terms', term),
      ' ',
      el('span', { class: 'meta' }, [
        `Rows: layers; columns: heads; each thumbnail ${term} (rows queries, columns keys), ${m < n ? `${m}×${m} block means of ${n}×${n}` : `${n}×${n}`}, ${SCALING_WORDS[scaling]}. Click one to open it. `,
      ]),
      progress,
    ]),
  );
  const box = el('div', { id: 'model-scroll', class: 'line-scroll', tabindex: '0' });
  const canvas = el('canvas', { id: 'model-canvas', class: 'line-canvas', role: 'img', 'aria-label': `Every layer × head of ${term}` });
  const spacer = el('div', { class: 'line-spacer' });
  box.append(canvas, spacer);
  body.append(box);
  const top = Math.max(0, box.getBoundingClientRect().top);
  const below = (document.getElementById('analysis-readout')?.offsetHeight ?? 60) + 24;
  const height = Math.max(200, Math.min(g.height + 4, window.innerHeight - top - below));
  box.style.height = `${height}px`;
  box.style.width = `${g.width + 18}px`;
  canvas.style.width = `${g.width + 4}px`;
  canvas.style.height = `${height}px`;
  spacer.style.height = `${Math.max(0, g.height - height)}px`;
  // The grid's geometry, for tests that click a thumbnail.
  Object.assign(canvas.dataset, { thumb: String(g.thumb), gap: String(g.gap), labelW: String(g.labelW), labelH: String(g.labelH) });
  const style = getComputedStyle(document.body);
  const scene: GridScene = {
    g,
    layers,
    width: g.width + 4,
    height,
    strips: (li) => strips.get(keyOf(li)),
    current: { li: layers.indexOf(state.layer), h: state.head },
    text: style.getPropertyValue('--vscode-foreground').trim() || (theme === 'dark' ? '#ccc' : '#333'),
    accent: style.getPropertyValue('--vscode-focusBorder').trim() || '#0078d4',
    empty: style.getPropertyValue('--vscode-editorWidget-background').trim() || (theme === 'dark' ? '#2a2a2a' : '#eee'),
    font: `11px ${style.getPropertyValue('--vscode-font-family').trim() || 'sans-serif'}`,
  };
  let hovered: { li: number; h: number } | undefined;
  let queued = false;
  let slowest = 0;
  const paint = () => {
    queued = false;
    if (!canvas.isConnected) return;
    const ms = paintGrid(canvas, scene, box.scrollTop, hovered);
    if (canvas.dataset.firstPaintMs === undefined) canvas.dataset.firstPaintMs = ms.toFixed(2);
    else slowest = Math.max(slowest, ms);
    canvas.dataset.paintMs = ms.toFixed(2);
    canvas.dataset.maxPaintMs = slowest.toFixed(2);
    const loaded = layers.filter((_, li) => strips.get(keyOf(li))).length;
    canvas.dataset.loaded = String(loaded);
    progress.textContent =
      loaded === layers.length
        ? `All ${layers.length} layers loaded.`
        : `Loaded ${loaded} of ${layers.length} layers (the rest as they scroll into view)…`;
  };
  const repaint = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(paint);
  };
  // One request at a time, the rows on screen only, nearest the current layer first; stops with the view.
  let fetching = false;
  const pump = async () => {
    if (fetching) return;
    fetching = true;
    try {
      for (;;) {
        if (!ctx.isCurrent() || !canvas.isConnected) return;
        const li = nextToFetch(visibleLayers(g, box.scrollTop, height), (k) => !!strips.get(keyOf(k)), scene.current.li);
        const layer = li === undefined ? undefined : layers[li];
        if (li === undefined || layer === undefined) return;
        const r = await ctx.request({ type: 'heads', layer, kind: term, maxSize: m });
        const cells = r.size;
        const raw = fromBuffer(r.data, r.heads * cells * cells);
        const { shown: mapped, range } = mapValues(raw, r.heads * cells, cells, signed, scaling, n);
        const lut = lutFor(state.colorScale, range, theme);
        const strip = document.createElement('canvas');
        paintInto(strip, mapped, r.heads * cells, cells, range, lut);
        strips.set(keyOf(li), { canvas: strip, cells, heads: r.heads, values: mapped, range, lut });
        setPicture();
        repaint();
      }
    } catch (e) {
      if (ctx.isCurrent()) progress.textContent = `Could not load a layer: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      fetching = false;
    }
  };
  const at = (e: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    return thumbAt(g, e.clientX - r.left, e.clientY - r.top + box.scrollTop);
  };
  canvas.addEventListener('mousemove', (e) => {
    const t = at(e);
    if (t?.li === hovered?.li && t?.h === hovered?.h) return;
    hovered = t;
    canvas.style.cursor = t ? 'pointer' : 'default';
    readout(t ? `Layer ${layers[t.li]}, head ${t.h} (${term}): click to open it in the heatmap.` : 'Hover a thumbnail; click to open it.');
    repaint();
  });
  canvas.addEventListener('mouseleave', () => {
    hovered = undefined;
    repaint();
  });
  canvas.addEventListener('click', (e) => {
    const t = at(e);
    const layer = t ? layers[t.li] : undefined;
    if (t && layer !== undefined) openHead(layer, t.h);
  });
  box.addEventListener(
    'scroll',
    () => {
      repaint();
      void pump();
    },
    { passive: true },
  );
  // Scroll the current layer's row into view, then draw and start fetching.
  const curY = g.labelH + Math.max(0, scene.current.li) * (g.thumb + g.gap);
  if (curY + g.thumb > height) box.scrollTop = curY - (height - g.thumb) / 2;
  readout('Hover a thumbnail; click to open it.');
  paint();
  setPicture();
  void pump();

  /** What export shows: the loaded thumbnails as one mosaic (rows: layers × cells, columns: heads × cells). */
  function setPicture(): void {
    const cols = H * m;
    const rows = layers.length * m;
    const values = new Float32Array(rows * cols).fill(NaN);
    let lut: Uint8ClampedArray | undefined;
    layers.forEach((_, li) => {
      const s = strips.get(keyOf(li));
      if (!s || s.cells !== m) return;
      lut = s.lut;
      for (let h = 0; h < s.heads; h++)
        for (let a = 0; a < m; a++)
          for (let b = 0; b < m; b++) values[(li * m + a) * cols + h * m + b] = position(s.values[(h * m + a) * m + b] ?? NaN, s.range);
    });
    if (!lut) return;
    const range: Range = { min: 0, max: 1, signed: false };
    $picture.set({
      canvas,
      values,
      rows,
      cols,
      range,
      lut,
      title: `${term} · layers ${layers[0]}–${layers[layers.length - 1]} (rows) × heads 0–${H - 1} (columns), ${SCALING_WORDS[scaling]}`,
    });
  }
}

function position(v: number, r: Range): number {
  return Number.isNaN(v) ? NaN : Math.max(0, Math.min(1, rampPosition(v, r)));
}
