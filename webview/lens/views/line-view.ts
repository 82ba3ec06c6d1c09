// The Line tab (bertviz's head view, done for long inputs): queries on the left, keys on the right, one line per
// (query, key) whose opacity is the weight of the current layer, head and term. Hover a word to keep only its
// lines (its row on the left, its column on the right); click to hold it. One canvas, virtualised: only the rows
// in view (and the lines that cross the view) are drawn on each scroll.
import { formatValue } from '../../../src/shared/format';
import { isSignedKind } from '../../../src/shared/kinds';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { lutFor } from '../../common/colors';
import { robustRange } from '../../../src/shared/value-range';
import { effectiveScaling, mapValues } from '../../../src/shared/row-scale';
import { el, themeKind } from '../../common/dom';
import { $picture } from '../state/picture';
import { onScreen } from '../state/selectors';
import { $hover, $merged } from '../state/store';
import { readout } from './kit';
import { lineFigureSvg, type LineFigureSpec } from './line-figure';
import { lineFigureCanvas } from './line-figure-canvas';
import {
  clipLabel,
  linesPerWord,
  rowAt,
  rowMaxima,
  strongest,
  visibleWindow,
  type Focus,
  type LineLayout,
  type OpacityScale,
} from './line-view-model';
import { paintLines, spacerHeight, type LineScene } from './line-view-paint';
import { termButtons } from './term-buttons';
import type { ViewContext } from './view-context';

const ROW_H = 16;
/** The opacity rule picked last (kept across layers and heads while the page lives). */
let relative = false;
const LABEL_CHARS = 18;

export async function renderLineView(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const { layer, head, term } = state;
  let values: Float32Array;
  let labels: string[];
  let n: number;
  let unit = 'tokens';
  if (state.merge) {
    const w = await ctx.request({ type: 'words', layer, head, kind: term, mode: state.merge });
    if (!ctx.isCurrent()) return;
    n = w.n;
    values = fromBuffer(w.data, n * n);
    labels = w.groups.map((g) => g.text);
    unit = w.mode === 'identifiers' ? 'identifiers' : 'words';
    // The strip shows the same words the columns do.
    $merged.set(w.groups);
  } else {
    const r = await ctx.request({ type: 'slice', layer, head, kind: term });
    if (!ctx.isCurrent()) return;
    n = r.n;
    values = fromBuffer(r.data, n * n);
    labels = init.tokens.map((t) => (t.special ? t.text : pieceLabel(t.text)));
  }
  const signed = isSignedKind(term);
  const robust = signed ? robustRange(values, true) : undefined;
  const absolute: OpacityScale = { signed, max: robust?.max ?? 1 };
  const perRow: OpacityScale = { ...absolute, rowMax: rowMaxima(values, n, signed) };
  const width = Math.max(320, Math.min(document.body.clientWidth - 48, 760));
  const colW = Math.min(170, Math.floor(width * 0.3));
  const layout: LineLayout = { n, rowH: ROW_H, pad: 6 };
  const summary = el('p', { id: 'line-summary', class: 'meta' });
  const say = () =>
    (summary.textContent =
      `Layer ${layer}, head ${head}, ${term}: ${n} ${unit}. ` +
      (relative
        ? `Opacity = ${signed ? `|${term}|` : 'the weight'} ÷ the largest in its query’s row (each row’s strongest line is opaque).`
        : signed
          ? `Opacity = |${term}| / ${formatValue(absolute.max)} (99th percentile of |${term}|, clipped).`
          : 'Opacity = the attention weight itself (1 = opaque; it never saturates).') +
      (signed ? ' Orange raises the score, blue lowers it.' : '') +
      ` Lines under 2% opacity are not drawn; at most the ${linesPerWord(signed || relative)} strongest per word until you hover one.`);
  const mode = el('select', { id: 'line-opacity', 'aria-label': 'Line opacity' }, [
    el('option', { value: 'weight' }, [signed ? `|${term}|` : 'weight']),
    el('option', { value: 'row' }, ['÷ its row’s max']),
  ]);
  mode.value = relative ? 'row' : 'weight';
  mode.addEventListener('change', () => {
    relative = mode.value === 'row';
    scene.scale = relative ? perRow : absolute;
    say();
    repaint();
  });
  say();
  body.append(
    el('div', { class: 'analysis-controls' }, [termButtons('line-terms', term), ' ', el('label', {}, ['Opacity ', mode])]),
    summary,
  );
  const box = el('div', { id: 'line-scroll', class: 'line-scroll', tabindex: '0' });
  const canvas = el('canvas', {
    id: 'line-canvas',
    class: 'line-canvas',
    role: 'img',
    'aria-label': `Lines from ${n} query ${unit} (left) to ${n} key ${unit} (right), opacity = ${term} weight, layer ${layer}, head ${head}`,
  });
  const spacer = el('div', { class: 'line-spacer' });
  box.append(canvas, spacer);
  body.append(box);
  const top = box.getBoundingClientRect().top;
  // Above the fold and above the readout, which sticks to the bottom of the panel.
  const below = (document.getElementById('analysis-readout')?.offsetHeight ?? 60) + 24;
  const height = Math.max(260, Math.min(n * ROW_H + 2 * layout.pad, window.innerHeight - Math.max(0, top) - below));
  box.style.height = `${height}px`;
  // Room for the scrollbar beside the canvas.
  box.style.width = `${width + 14}px`;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const style = getComputedStyle(document.body);
  const dark = themeKind() === 'dark';
  const colours = {
    text: style.getPropertyValue('--vscode-foreground').trim() || (dark ? '#ccc' : '#333'),
    dim: style.getPropertyValue('--vscode-descriptionForeground').trim() || '#888',
    pos: signed ? (dark ? '#ff9e57' : '#d4580a') : dark ? '#6cb6ff' : '#1a5fb4',
    neg: dark ? '#6cb6ff' : '#1a5fb4',
    mark: style.getPropertyValue('--vscode-editor-selectionBackground').trim() || (dark ? '#264f78' : '#add6ff'),
  };
  const font = `12px ${style.getPropertyValue('--vscode-font-family').trim() || 'sans-serif'}`;
  const scene: LineScene = {
    layout,
    values,
    labels: labels.map((t) => clipLabel(t, LABEL_CHARS)),
    scale: relative ? perRow : absolute,
    width,
    height,
    colW,
    colours,
    font,
    empty: `No line here reaches 2% opacity: every weight is small (a spread-out head). Opacity “÷ its row’s max” shows their order.`,
  };
  spacer.style.height = `${spacerHeight(scene)}px`;
  let hovered: Focus | undefined;
  let held: Focus | undefined;
  let queued = false;
  let slowest = 0;
  const paint = () => {
    queued = false;
    if (!canvas.isConnected) return;
    const st = paintLines(canvas, scene, box.scrollTop, held ?? hovered);
    // The first paint (canvas allocated, fonts resolved) is the view's draw; repaints (scroll, hover) come after.
    if (canvas.dataset.firstPaintMs === undefined) canvas.dataset.firstPaintMs = st.ms.toFixed(2);
    else slowest = Math.max(slowest, st.ms);
    canvas.dataset.paintMs = st.ms.toFixed(2);
    canvas.dataset.maxPaintMs = slowest.toFixed(2);
    canvas.dataset.lines = String(st.lines);
    canvas.dataset.window = `${st.first}-${st.last}`;
  };
  const repaint = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(paint);
  };
  const describe = (f: Focus | undefined) => {
    if (!f) return readout('Hover a word for its lines; click to hold it.');
    const top5 = strongest(values, n, f, 5)
      .map(([o, v]) => `“${labels[o] ?? o}” #${o} ${formatValue(v)}`)
      .join(', ');
    const who = `${f.side} “${labels[f.k] ?? f.k}” #${f.k}`;
    readout(`${who}${held ? ' (held)' : ''} — strongest ${f.side === 'query' ? 'keys' : 'queries'}: ${top5}`);
  };
  const focusAt = (e: MouseEvent): Focus | undefined => {
    const r = canvas.getBoundingClientRect();
    const k = rowAt(layout, e.clientY - r.top + box.scrollTop);
    if (k === undefined) return undefined;
    const x = e.clientX - r.left;
    return { side: x < width / 2 ? 'query' : 'key', k };
  };
  const same = (a?: Focus, b?: Focus) => a?.side === b?.side && a?.k === b?.k;
  canvas.addEventListener('mousemove', (e) => {
    const f = focusAt(e);
    if (same(f, hovered)) return;
    hovered = f;
    if (!held) describe(f);
    repaint();
  });
  canvas.addEventListener('mouseleave', () => {
    hovered = undefined;
    if (!held) describe(undefined);
    repaint();
  });
  canvas.addEventListener('click', (e) => {
    const f = focusAt(e);
    held = same(f, held) ? undefined : f;
    describe(held ?? f);
    repaint();
  });
  box.addEventListener('scroll', repaint, { passive: true });
  // A word hovered in the strip above isolates its row here too.
  const stop = $hover.listen(({ i, fromStrip }) => {
    if (!ctx.isCurrent() || !canvas.isConnected) return stop();
    if (!fromStrip || held) return;
    const f: Focus | undefined = i === null || i >= n ? undefined : { side: 'query', k: i };
    if (same(f, hovered)) return;
    hovered = f;
    describe(f);
    repaint();
  });
  paint();
  describe(undefined);
  // Export: the same weights as the heatmap would draw them (its colour mapping), with the words as labels.
  const { shown: painted, range } = mapValues(values, n, n, signed, effectiveScaling(state.scaling, signed), n);
  const lut = lutFor(state.colorScale, range, themeKind());
  const title = `${term} · layer ${layer} · head ${head}`;
  // The figure is the lines themselves (the matrix fields stay for what reads a picture's values).
  const figure = (size: { widthCm: number; dpi: number }) => {
    const spec: LineFigureSpec = {
      values,
      n,
      labels,
      scale: scene.scale,
      window: visibleWindow(layout, box.scrollTop, height, 0),
      title: `${init.model.name} · ${title} · lines`,
      // The panel's sentence without what only the panel does (hovering).
      caption: (summary.textContent ?? '').replace(' until you hover one', ''),
      colours,
      ...size,
    };
    const background = themeKind() === 'dark' ? '#1e1e1e' : '#ffffff';
    return { svg: () => lineFigureSvg(spec, background), canvas: () => lineFigureCanvas(spec, background) };
  };
  $picture.set({ canvas, values: painted, rows: n, cols: n, range, lut, title, figure });
}
