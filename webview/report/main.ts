// The standalone HTML report's script, bundled to dist/report.js and inlined into the page by
// src/analysis/export/html-report.ts. It reads the JSON payload from #lens-data, decodes base64 float32 slices,
// and draws one layer/head/kind heatmap with a token strip and a hover readout, with the panel's own colour
// scales, robust limits and painter (webview/common), so an exported page looks like the panel's light theme.
import { isSignedKind, type MatrixKind } from '../../src/shared/kinds';
import { luminance } from '../common/chip-colours';
import { colorOf, cssRgb, describeRange, makeLut, robustRange, type Range } from '../common/colors';
import { paintRamp } from '../common/legend-bar';
import { paintInto } from '../common/paint-canvas';

/** What html-report.ts embeds: the shape of the result and each `layer/kind` tensor as base64 float32. */
interface Payload {
  meta: {
    n: number;
    heads: number;
    layers: number[];
    kinds: MatrixKind[];
    scale: number;
    tokens: { text: string; start: number; end: number; special: boolean }[];
    initial: { layer: number; head: number; kind: MatrixKind };
  };
  data: Record<string, string>;
}

/** The page is a light one (white background): the panel's light-theme ramps, its default colour scale. */
const THEME = 'light';
const SCALE = 'diverging';

function byId<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`report: #${id} is missing`);
  return e as T;
}

const payload = JSON.parse(byId('lens-data').textContent ?? '{}') as Payload;
const { meta } = payload;
const n = meta.n;
const tensors = new Map<string, Float32Array>();

/** The [heads, n, n] tensor of one layer and kind, decoded once. */
function tensor(layer: number, kind: string): Float32Array {
  const key = `${layer}/${kind}`;
  let t = tensors.get(key);
  if (!t) {
    const bin = atob(payload.data[key] ?? '');
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    t = new Float32Array(bytes.buffer);
    tensors.set(key, t);
  }
  return t;
}

/** One head's n × n matrix. */
function matrix(layer: number, head: number, kind: string): Float32Array {
  return tensor(layer, kind).subarray(head * n * n, (head + 1) * n * n);
}

function value(layer: number, head: number, kind: string, i: number, j: number): number {
  return matrix(layer, head, kind)[i * n + j] ?? NaN;
}

/** The panel's limits for one matrix (robust: the top 1% of cells share the end colour), worked out once. */
const ranges = new Map<string, Range>();
function rangeOf(layer: number, head: number, kind: MatrixKind): Range {
  const key = `${layer}/${head}/${kind}`;
  let r = ranges.get(key);
  if (!r) {
    r = robustRange(matrix(layer, head, kind), isSignedKind(kind));
    ranges.set(key, r);
  }
  return r;
}

const layerSel = byId<HTMLSelectElement>('layer');
const headSel = byId<HTMLSelectElement>('head');
const kindSel = byId<HTMLSelectElement>('kind');
const canvas = byId<HTMLCanvasElement>('heat');
const strip = byId('strip');
const readout = byId('readout');

function option(sel: HTMLSelectElement, v: string | number, label: string): void {
  const o = document.createElement('option');
  o.value = String(v);
  o.textContent = label;
  sel.appendChild(o);
}
for (const l of meta.layers) option(layerSel, l, `layer ${l}`);
for (let h = 0; h < meta.heads; h++) option(headSel, h, `head ${h}`);
for (const k of meta.kinds) option(kindSel, k, k);
layerSel.value = String(meta.initial.layer);
headSel.value = String(meta.initial.head);
kindSel.value = meta.initial.kind;

const tokenText = (i: number) => meta.tokens[i]?.text ?? `#${i}`;
const spans = meta.tokens.map((t, i) => {
  const s = document.createElement('span');
  s.className = `tok${t.special ? ' special' : ''}`;
  s.textContent = t.text;
  s.title = `${i}: ${t.text}${t.special ? ' (special)' : ` [${t.start},${t.end})`}`;
  s.tabIndex = 0;
  s.addEventListener('mouseenter', () => showRow(i));
  s.addEventListener('focus', () => showRow(i));
  strip.appendChild(s);
  return s;
});

function cur(): { layer: number; head: number; kind: MatrixKind } {
  return { layer: Number(layerSel.value), head: Number(headSel.value), kind: kindSel.value as MatrixKind };
}

function draw(): void {
  const { layer, head, kind } = cur();
  const signed = isSignedKind(kind);
  const range = rangeOf(layer, head, kind);
  const lut = makeLut(SCALE, signed, THEME);
  // One canvas pixel per cell, scaled up with hard edges by CSS, as the panel paints.
  paintInto(canvas, matrix(layer, head, kind), n, n, range, lut);
  const cell = Math.max(1, Math.floor(Math.min(640, 12 * n) / n));
  canvas.style.width = `${cell * n}px`;
  canvas.style.height = `${cell * n}px`;
  paintRamp(byId<HTMLCanvasElement>('legend-bar'), lut);
  const ex = range.exact ?? range;
  const max = signed ? `raw, unscaled; |max| = ${Math.max(-ex.min, ex.max).toPrecision(4)}` : `max = ${ex.max.toPrecision(4)}`;
  byId('legend').textContent = `${kind} (${max}) · ${describeRange(range, 'colours')} · scale = ${meta.scale.toPrecision(6)}`;
}

const fmt = (v: number) => v.toPrecision(5);

function showCell(i: number, j: number): void {
  const { layer, head } = cur();
  const parts = meta.kinds.map((k) => `${k} = ${fmt(value(layer, head, k, i, j))}`);
  readout.textContent = `query ${i} "${tokenText(i)}" → key ${j} "${tokenText(j)}" (δ = ${i - j}): ${parts.join(', ')}`;
}

/** Shades every token by query i's attention (or the term shown), in the colours of its heatmap cells. */
function showRow(i: number): void {
  const { layer, head, kind: shown } = cur();
  const kind: MatrixKind = meta.kinds.includes('probs') ? 'probs' : shown;
  const range = rangeOf(layer, head, kind);
  const lut = makeLut(SCALE, isSignedKind(kind), THEME);
  spans.forEach((s, j) => {
    const c = colorOf(value(layer, head, kind, i, j), range, lut);
    s.style.background = cssRgb(c);
    // Black or white text, whichever reads on the colour (the strip chips' rule).
    s.style.color = luminance(c) > 0.179 ? '#000' : '#fff';
    s.classList.toggle('query', j === i);
  });
  readout.textContent = `query ${i} "${tokenText(i)}": strip shaded by ${kind} of layer ${layer}, head ${head}`;
}

canvas.addEventListener('mousemove', (e) => {
  const r = canvas.getBoundingClientRect();
  const j = Math.floor(((e.clientX - r.left) / r.width) * n);
  const i = Math.floor(((e.clientY - r.top) / r.height) * n);
  if (i >= 0 && i < n && j >= 0 && j < n) showCell(i, j);
});
for (const s of [layerSel, headSel, kindSel]) s.addEventListener('change', draw);
draw();
