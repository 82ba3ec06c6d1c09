// The standalone HTML report's script, bundled to dist/report.js and inlined into the page by
// src/analysis/export/html-report.ts. It draws with the lens panel's own parts: the Heatmap (whole-word axis
// labels, zoom, hover), the panel's colour mapping (probabilities each row on a log scale by default), its legend,
// its token layout and its figure export (PNG and SVG with title, labels and colour bar), in light or dark.
import { formatValue } from '../../src/shared/format';
import { isSignedKind, type MatrixKind } from '../../src/shared/kinds';
import type { ColorScaleName, ScalingName } from '../../src/shared/protocol/lens-names';
import type { ReportPayload } from '../../src/shared/protocol/report';
import { pieceLabel } from '../../src/shared/token-layout';
import { describeRange, lutFor } from '../common/colors';
import { type Range } from '../../src/shared/value-range';
import { mapSide } from '../common/axis-ticks';
import { el, themeKind } from '../common/dom';
import { figureSvg, mapFigure, type FigureSpec } from '../common/figure';
import { figureCanvas } from '../common/figure-canvas';
import { wordLabels } from '../common/figure-labels';
import { Heatmap } from '../common/heatmap';
import { legendEnd, paintRamp } from '../common/legend-bar';
import { effectiveScaling, mapValues, SCALING_CHOICES } from '../../src/shared/row-scale';
import { ReportStrip } from './strip';

function byId<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`report: #${id} is missing`);
  return e as T;
}

const { meta, data } = JSON.parse(byId('lens-data').textContent ?? '{}') as ReportPayload;
const n = meta.n;
const tensors = new Map<string, Float32Array>();

/** The [heads, n, n] tensor of one layer and kind, decoded once. */
function tensor(layer: number, kind: string): Float32Array {
  const key = `${layer}/${kind}`;
  let t = tensors.get(key);
  if (!t) {
    const bin = atob(data[key] ?? '');
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    t = new Float32Array(bytes.buffer);
    tensors.set(key, t);
  }
  return t;
}

/** One head's n × n matrix. */
const matrix = (layer: number, head: number, kind: string) => tensor(layer, kind).subarray(head * n * n, (head + 1) * n * n);

const option = (sel: HTMLSelectElement, value: string | number, label: string) =>
  sel.append(el('option', { value: String(value) }, [label]));
const layerSel = byId<HTMLSelectElement>('layer');
const headSel = byId<HTMLSelectElement>('head');
const kindSel = byId<HTMLSelectElement>('kind');
const scalingSel = byId<HTMLSelectElement>('scaling');
const colourSel = byId<HTMLSelectElement>('colours');
const themeSel = byId<HTMLSelectElement>('theme');
for (const l of meta.layers) option(layerSel, l, `Layer ${l}`);
for (let h = 0; h < meta.heads; h++) option(headSel, h, `Head ${h}`);
for (const k of meta.kinds) option(kindSel, k, k);
for (const [v, label] of SCALING_CHOICES) option(scalingSel, v, label);
layerSel.value = String(meta.initial.layer);
headSel.value = String(meta.initial.head);
kindSel.value = meta.initial.kind;

// Axis labels as the panel's: the piece on every row, the whole word on a word's first piece for thinned axes.
const words = wordLabels(meta.text, meta.tokens);
const pieces = meta.tokens.map((t) => (t.special ? t.text : pieceLabel(t.text)));
const label = (i: number) => words[i] || pieces[i] || `#${i}`;

/** What is on screen: the raw matrix, the values as painted, and how they were coloured. */
let shown: { layer: number; head: number; kind: MatrixKind; raw: Float32Array; values: Float32Array; range: Range; lut: Uint8ClampedArray };
let pinned: number | null = null;
let hover: { i: number | null; j: number | null } = { i: null, j: null };

const readout = byId('readout');
const heatmap = new Heatmap({
  hover: (i, j) => {
    hover = { i, j };
    heatmap.setHover(i, j);
    showHover(false);
  },
  click: () => {
    pinned = hover.i === pinned ? null : hover.i;
    showHover(false);
  },
});
byId('map').append(heatmap.root);
const strip = new ReportStrip(
  byId('tokens'),
  meta.text,
  meta.tokens,
  (i) => `#${i} ${pieces[i] ?? ''}${meta.tokens[i]?.special ? ' (added by the model)' : ''}`,
  (i) => {
    hover = { i, j: null };
    heatmap.setHover(i, null);
    showHover(true);
  },
  (i) => {
    pinned = pinned === i ? null : i;
    showHover(true);
  },
);

function applyTheme(): void {
  const dark = themeSel.value === 'dark' || (themeSel.value === 'auto' && matchMedia('(prefers-color-scheme: dark)').matches);
  document.body.classList.toggle('vscode-dark', dark);
  document.body.classList.toggle('vscode-light', !dark);
}

/** The map's side: the free width right of the strip column (or under it on a narrow page), within the window. */
function side(): number {
  const box = byId('map');
  const width = box.clientWidth - heatmap.axisLeft - heatmap.topOverhang;
  const height = window.innerHeight - 140;
  return mapSide({ width, height: Math.max(height, 320), n });
}

function draw(): void {
  const layer = Number(layerSel.value);
  const head = Number(headSel.value);
  const kind = kindSel.value as MatrixKind;
  const signed = isSignedKind(kind);
  const picked = scalingSel.value === 'auto' ? undefined : (scalingSel.value as ScalingName);
  const scaling = effectiveScaling(picked, signed);
  const raw = matrix(layer, head, kind);
  const mapped = mapValues(raw, n, n, signed, scaling);
  const lut = lutFor(colourSel.value as ColorScaleName, mapped.range, themeKind());
  shown = { layer, head, kind, raw, values: mapped.shown, range: mapped.range, lut };
  heatmap.readTheme();
  heatmap.set({ values: mapped.shown, n, range: mapped.range, lut, labels: pieces, words }, side());
  paintRamp(byId<HTMLCanvasElement>('legend-bar'), lut);
  byId('legend-min').textContent = legendEnd(mapped.range, 'min');
  byId('legend-max').textContent = legendEnd(mapped.range, 'max');
  byId('legend-label').textContent = `${describeRange(mapped.range, kind)} · scale = ${formatValue(meta.scale)}`;
  heatmap.canvas.setAttribute(
    'aria-label',
    `Heatmap of ${kind}, layer ${layer}, head ${head}: ${n}×${n}, rows are queries, columns are keys`,
  );
  showHover(false);
}

/** The readout and the strip for the hovered (or pinned) query and key. */
function showHover(fromStrip: boolean): void {
  const i = hover.i ?? pinned;
  const j = hover.i === null ? null : hover.j;
  strip.shade(i, { shown: shown.values, n, range: shown.range, lut: shown.lut }, pinned, !fromStrip);
  if (i === null) {
    readout.textContent = 'Hover a token or a heatmap cell (click pins a row).';
    return;
  }
  const value = (k: MatrixKind, jj: number) => formatValue(matrix(shown.layer, shown.head, k)[i * n + jj] ?? NaN);
  if (j === null) {
    readout.textContent = `query ${i} “${label(i)}”: every token shaded by its ${shown.kind} in this row${pinned === i ? ' (pinned)' : ''}`;
    return;
  }
  const parts = meta.kinds.map((k) => `${k} = ${value(k, j)}`);
  readout.textContent = `query ${i} “${label(i)}” → key ${j} “${label(j)}” (δ = ${i - j}): ${parts.join(', ')}`;
}

/** The figure of what is on screen, as the panel exports it. */
function figure(): FigureSpec {
  const widthCm = Math.min(40, Math.max(4, Number(byId<HTMLInputElement>('fig-width').value) || 8));
  const dpi = Math.min(1200, Math.max(72, Number(byId<HTMLInputElement>('fig-dpi').value) || 300));
  return mapFigure({
    size: { widthCm, dpi },
    theme: themeKind(),
    values: shown.values,
    n,
    range: shown.range,
    lut: shown.lut,
    title: `${meta.model.name} · ${shown.kind} · layer ${shown.layer} · head ${shown.head}`,
    kind: shown.kind,
    labels: words,
  });
}

function download(name: string, href: string): void {
  const a = el('a', { href, download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

function save(format: 'svg' | 'png'): void {
  const name = `${meta.model.name}-${shown.kind}-L${shown.layer}-H${shown.head}.${format}`.replace(/[^\w.-]+/g, '_');
  if (format === 'png') return download(name, figureCanvas(figure()).toDataURL('image/png'));
  const url = URL.createObjectURL(new Blob([figureSvg(figure())], { type: 'image/svg+xml' }));
  download(name, url);
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

for (const s of [layerSel, headSel, kindSel, scalingSel, colourSel]) s.addEventListener('change', draw);
themeSel.addEventListener('change', () => (applyTheme(), draw()));
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => themeSel.value === 'auto' && (applyTheme(), draw()));
byId('save-svg').addEventListener('click', () => save('svg'));
byId('save-png').addEventListener('click', () => save('png'));
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    pinned = null;
    showHover(false);
  }
});
let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => heatmap.resize(side()), 100);
});
applyTheme();
draw();
