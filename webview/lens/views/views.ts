// DOM of the analysis views (term shares, ablation, distance profile, bucket lens, rollout). app/render.ts hands
// this module a context; the maths is on the host, the words and
// colours in views-model.ts.
import { cellAt } from '../../../src/shared/hover';
import { withAxisLabels } from '../../common/grid-labels';
import { el, themeKind } from '../../common/dom';
import { cssRgb, makeLut, paintMatrix, robustRange, valueRange, type Range } from '../../common/colors';
import { formatValue } from '../../../src/shared/format';
import { pieceLabel } from '../../../src/shared/token-layout';
import {
  ablationRowText,
  bucketPairText,
  bertNoSplitText,
  BERT_NOT_APPLICABLE,
  bucketSummary,
  diffCaption,
  diffMismatch,
  DIFF_EMPTY,
  labelTag,
  meanMax,
  peakSentence,
  PRESET_LABELS,
  profileRange,
  PROFILE_ORDER,
  SERIES_COLORS,
  shareColor,
  shareText,
  viewCaption,
  ZONE_COLORS,
  ZONE_TEXT,
} from './views-model';
import { renderInterventions } from './interventions';
import { renderRanking } from './head-ranking';
import { renderBertShares } from './bert-shares';
import {
  ABLATION_PRESETS,
  fromBuffer,
  isBertModel,
  type AblationPresetName,
  type AnalysisView,
  type LensReply,
  type DistanceResponse,
  type PersistedState,
  type RequestBody,
  type ViewInit,
} from '../../../src/shared/protocol/lens';

export interface ViewContext {
  init: ViewInit;
  state: PersistedState;
  request<B extends RequestBody>(body: B): Promise<LensReply<B>>;
  /** Opens layer/head in the heatmap (share grid click). */
  open(layer: number, head: number): void;
  setPreset(p: AblationPresetName): void;
  isCurrent(): boolean;
}

/** What export reads from the view on screen. */
export interface Picture {
  canvas: HTMLCanvasElement;
  values: Float32Array;
  rows: number;
  cols: number;
  range: Range;
  lut: Uint8ClampedArray;
  title: string;
}

let picture: Picture | undefined;
let hoverHook: ((i: number | null) => void) | undefined;

export function currentPicture(): Picture | undefined {
  return picture;
}


function tok(ctx: ViewContext, k: number): string {
  const t = ctx.init.tokens[k];
  return t ? (t.special ? t.text : pieceLabel(t.text)) : `#${k}`;
}

/** Paints `[rows, cols]` into a canvas: one canvas pixel per cell, one putImageData per matrix; CSS scales it up
 *  with `image-rendering: pixelated`. */
export function paintInto(canvas: HTMLCanvasElement, values: Float32Array, rows: number, cols: number, range: Range, lut: Uint8ClampedArray): void {
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(cols, rows);
  paintMatrix(values, range, lut, img.data);
  ctx.putImageData(img, 0, 0);
}

/** A new canvas showing `[rows, cols]` (one pixel per cell, CSS-scaled). */
function matrixCanvas(id: string, values: Float32Array, rows: number, cols: number, range: Range, lut: Uint8ClampedArray, px: number, label: string): HTMLCanvasElement {
  const c = el('canvas', { id, class: 'analysis-canvas', role: 'img', tabindex: '0', 'aria-label': label });
  paintInto(c, values, rows, cols, range, lut);
  c.style.width = `${px}px`;
  c.style.height = `${Math.round((px * rows) / cols)}px`;
  return c;
}

/** Calls `at(i, j)` with the square-matrix cell under the pointer. */
function onCell(c: HTMLCanvasElement, n: number, at: (i: number, j: number) => void): void {
  c.addEventListener('mousemove', (e) => {
    const r = c.getBoundingClientRect();
    const cell = cellAt(e.clientX - r.left, e.clientY - r.top, r.width, n);
    if (cell) at(cell.i, cell.j);
  });
}

function readout(text: string): void {
  const r = document.getElementById('analysis-readout');
  if (r) r.textContent = text;
}

function sidePx(n: number, parts: number): number {
  const avail = Math.max(180, Math.min(document.body.clientWidth - 64, 960));
  // In a narrow panel, two maps a row at a readable size rather than all of them in a row as thumbnails.
  const per = avail / parts < 200 && parts > 2 ? avail / 2 : avail / parts;
  return Math.max(Math.min(n * 4, 120), Math.floor(per) - 12);
}

function presetPicker(ctx: ViewContext, id: string, withAll: boolean): HTMLSelectElement {
  const terms = ctx.init.model.terms;
  const allowed = ABLATION_PRESETS.filter((p) => {
    if (p === 'all') return withAll;
    if (p === 'no-c2p') return terms.includes('c2p');
    if (p === 'no-p2c') return terms.includes('p2c');
    return true;
  });
  const sel = el('select', { id, 'aria-label': 'Ablation preset' }, allowed.map((p) => el('option', { value: p }, [PRESET_LABELS[p]])));
  const cur = ctx.state.preset ?? (withAll ? 'all' : 'content-only');
  sel.value = allowed.includes(cur) ? cur : allowed[withAll ? 0 : 1] ?? allowed[0];
  sel.addEventListener('change', () => ctx.setPreset(sel.value as AblationPresetName));
  return sel;
}

/** Renders `view` into `box`; resolves when drawn. */
export async function renderAnalysis(view: AnalysisView, box: HTMLElement, ctx: ViewContext): Promise<void> {
  picture = undefined;
  hoverHook = undefined;
  const bert = isBertModel(ctx.init.model);
  const head = el('div', { class: 'analysis-head' }, [el('p', { id: 'analysis-caption', class: 'caption' }, [viewCaption(view, bert)])]);
  const body = el('div', { id: `${view}-view`, class: 'analysis-body', 'data-view': view });
  const out = el('div', { id: 'analysis-readout', class: 'readout', role: 'status', 'aria-live': 'polite' }, ['Hover a cell for its numbers.']);
  box.replaceChildren(head, body, out);
  const unavailable = bert ? BERT_NOT_APPLICABLE[view] : undefined;
  if (unavailable) {
    // One line instead of a view built on terms BERT does not have.
    body.append(el('p', { id: 'analysis-unavailable', class: 'caption' }, [unavailable]));
    head.remove();
    out.hidden = true;
    return;
  }
  switch (view) {
    case 'shares':
      return bert ? renderBertShares(body, ctx) : shares(body, ctx);
    case 'ablation':
      return ablation(body, ctx);
    case 'distance':
      return distance(body, ctx);
    case 'buckets':
      return buckets(body, ctx);
    case 'rollout':
      return rollout(body, ctx);
    case 'diff':
      return diff(body, ctx);
    case 'interventions':
      return renderInterventions(body, ctx);
    case 'ranking':
      return renderRanking(body, ctx);
  }
}

/** The hovered query token changed (strip or editor); views that follow it redraw. */
export function hoverToken(i: number | null): void {
  hoverHook?.(i);
}

// ---- 1. term shares ----
async function shares(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const r = await ctx.request({ type: 'shares', weighting: 'uniform' });
  if (!ctx.isCurrent()) return;
  const L = r.layers.length;
  const H = r.heads;
  const content = fromBuffer(r.content, L * H);
  const c2p = r.c2p ? fromBuffer(r.c2p, L * H) : undefined;
  const p2c = r.p2c ? fromBuffer(r.p2c, L * H) : undefined;
  const theme = themeKind();
  const cell = Math.max(18, Math.min(44, Math.floor(560 / Math.max(H, 1))));
  const c = el('canvas', { id: 'shares-grid', class: 'analysis-canvas', role: 'img', tabindex: '0', 'aria-label': 'Term shares: rows layers, columns heads; green content, purple position' });
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(H * cell * dpr);
  c.height = Math.round(L * cell * dpr);
  c.style.width = `${H * cell}px`;
  c.style.height = `${L * cell}px`;
  const g = c.getContext('2d');
  if (g) {
    g.scale(dpr, dpr);
    g.font = `${Math.round(cell * 0.45)}px sans-serif`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    for (let li = 0; li < L; li++) {
      for (let h = 0; h < H; h++) {
        const k = li * H + h;
        g.fillStyle = cssRgb(shareColor(content[k], theme));
        g.fillRect(h * cell, li * cell, cell - 1, cell - 1);
        g.fillStyle = theme === 'dark' ? '#eee' : '#111';
        g.fillText(labelTag(r.labels[k]), h * cell + cell / 2, li * cell + cell / 2);
      }
    }
    const ci = r.layers.indexOf(ctx.state.layer);
    if (ci >= 0) {
      g.strokeStyle = theme === 'dark' ? '#fff' : '#000';
      g.lineWidth = 2;
      g.strokeRect(ctx.state.head * cell + 1, ci * cell + 1, cell - 3, cell - 3);
    }
  }
  const at = (e: MouseEvent) => {
    const b = c.getBoundingClientRect();
    const li = Math.floor(((e.clientY - b.top) / b.height) * L);
    const h = Math.floor(((e.clientX - b.left) / b.width) * H);
    return li >= 0 && li < L && h >= 0 && h < H ? { li, h } : undefined;
  };
  c.addEventListener('mousemove', (e) => {
    const p = at(e);
    if (p) {
      const k = p.li * H + p.h;
      readout(shareText(r.layers[p.li], p.h, content[k], r.labels[k], c2p?.[k], p2c?.[k]));
    }
  });
  c.addEventListener('click', (e) => {
    const p = at(e);
    if (p) ctx.open(r.layers[p.li], p.h);
  });
  const counts = { content: 0, positional: 0, mixed: 0 };
  for (const l of r.labels) counts[l]++;
  const legend = el('div', { id: 'shares-legend', class: 'legend' }, [
    swatch(shareColor(1, theme), `C content (c2c share ≥ ${r.thresholds.content}): ${counts.content}`),
    swatch(shareColor(0.5, theme), `M mixed: ${counts.mixed}`),
    swatch(shareColor(0, theme), `P positional (c2c share ≤ ${r.thresholds.positional}): ${counts.positional}`),
    el('span', { class: 'meta' }, ['Click a head to open it.']),
  ]);
  body.append(withAxisLabels(c, r.layers.map((l) => `L${l}`), Array.from({ length: H }, (_, h) => `H${h}`), cell, { rows: 'layer', cols: 'head' }), legend);
  const lut = new Uint8ClampedArray(256 * 4);
  for (let k = 0; k < 256; k++) lut.set([...shareColor(k / 255, theme), 255], k * 4);
  picture = { canvas: c, values: content, rows: L, cols: H, range: { min: 0, max: 1, signed: false }, lut, title: 'Content share per layer (rows) and head (columns)' };
}

function swatch(rgb: readonly [number, number, number], text: string): HTMLElement {
  const s = el('span', { class: 'swatch' });
  s.style.backgroundColor = cssRgb(rgb);
  return el('span', { class: 'legend-item' }, [s, text]);
}

/**
 * Robust limits shared by the maps of one figure (equal colours mean equal values across them): at long
 * lengths a 0-to-max ramp leaves all but the few largest cells at the page colour.
 */
function jointLimits(maps: Float32Array[], signed: boolean): Range {
  if (maps.length === 1) return robustRange(maps[0], signed);
  const all = new Float32Array(maps.reduce((a, m) => a + m.length, 0));
  maps.reduce((at, m) => (all.set(m, at), at + m.length), 0);
  return robustRange(all, signed);
}

/** A caption's limits: "0 … 0.012 (99th pct of 0.81)" or "±0.5". */
function limitsText(r: Range): string {
  const ends = r.signed ? `±${formatValue(r.max)}` : `0 … ${formatValue(r.max)}`;
  return r.percentile && r.exact ? `${ends}, ${r.percentile}th percentile; data to ${formatValue(r.signed ? Math.max(-r.exact.min, r.exact.max) : r.exact.max)}` : ends;
}

// ---- 2. ablation ----
async function ablation(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const { layer, head } = ctx.state;
  const picker = presetPicker(ctx, 'ablation-preset', false);
  const preset = picker.value as AblationPresetName;
  body.append(el('div', { class: 'analysis-controls' }, [el('label', {}, ['Keep ', picker]), el('span', { class: 'meta' }, [` layer ${layer}, head ${head}`])]));
  const r = await ctx.request({ type: 'ablation', layer, head, preset });
  if (!ctx.isCurrent()) return;
  const n = r.n;
  const real = fromBuffer(r.real, n * n);
  const abl = fromBuffer(r.probs, n * n);
  const diff = fromBuffer(r.diff, n * n);
  const kl = fromBuffer(r.kl, n);
  const tv = fromBuffer(r.tv, n);
  const scale = ctx.state.colorScale;
  const shared = jointLimits([real, abl], false);
  const probLut = makeLut(scale, false, themeKind());
  const diffRange = jointLimits([diff], true);
  const diffLut = makeLut(scale, true, themeKind());
  const px = sidePx(n, 3);
  const cReal = matrixCanvas('ablation-real', real, n, n, shared, probLut, px, 'Real probabilities');
  const cAbl = matrixCanvas('ablation-probs', abl, n, n, shared, probLut, px, `Ablated probabilities (${PRESET_LABELS[preset]})`);
  const cDiff = matrixCanvas('ablation-diff', diff, n, n, diffRange, diffLut, px, 'Ablated minus real');
  const fig = (c: HTMLCanvasElement, cap: string) => el('figure', { class: 'analysis-fig' }, [c, el('figcaption', { class: 'meta' }, [cap])]);
  body.append(
    el('div', { class: 'analysis-row' }, [
      fig(cReal, `real probs (${limitsText(shared)})`),
      fig(cAbl, `keeping ${r.kept.join(' + ')}`),
      fig(cDiff, `ablated − real (${limitsText(diffRange)})`),
    ]),
  );
  const klS = meanMax(kl);
  const tvS = meanMax(tv);
  body.append(
    el('p', { id: 'ablation-summary', class: 'meta' }, [
      `Mean KL(real ‖ ablated) ${formatValue(klS.mean)} nats (max ${formatValue(klS.max)} at “${tok(ctx, klS.argmax)}”); mean total variation ${formatValue(tvS.mean)} (max ${formatValue(tvS.max)}).`,
    ]),
  );
  const show = (i: number, j: number) => {
    const k = i * n + j;
    readout(
      `${ablationRowText(i, tok(ctx, i), kl[i], tv[i])}. Key #${j} “${tok(ctx, j)}”: real ${formatValue(real[k])}, ablated ${formatValue(abl[k])}, difference ${formatValue(diff[k])}.`,
    );
  };
  for (const c of [cReal, cAbl, cDiff]) onCell(c, n, show);
  picture = { canvas: cDiff, values: diff, rows: n, cols: n, range: diffRange, lut: diffLut, title: `Ablation ${preset} − real, layer ${layer} head ${head}` };
}

// ---- 3. distance profile ----
type ProfileLine = { kind: keyof typeof SERIES_COLORS; mean: Float32Array; std: Float32Array; peak: number };

async function distance(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const { layer, head } = ctx.state;
  const all = await ctx.request({ type: 'distance', layer, head, query: null });
  if (!ctx.isCurrent()) return;
  const n = all.n;
  const sentence = el('p', { id: 'distance-peaks', class: 'caption' });
  if (all.split === 'bert-none') {
    // BERT after layer 0: nothing to profile but the attention itself, which the heatmap shows.
    sentence.textContent = bertNoSplitText(layer, 'distance') + (all.series.probs ? ` Head ${head}’s attention ${peakSentence(all.series.probs.peakDelta)}.` : '');
    // The caption describes layer 0's split: here the sentence is all there is to say.
    document.getElementById('analysis-caption')?.remove();
    body.append(sentence);
    document.getElementById('analysis-readout')?.setAttribute('hidden', '');
    return;
  }
  const w = Math.max(320, Math.min(document.body.clientWidth - 64, 900));
  const h = 220;
  const series = (r: DistanceResponse): ProfileLine[] =>
    PROFILE_ORDER.filter((k) => r.series[k]).map((k) => ({ kind: k, mean: fromBuffer(r.series[k]!.mean, 2 * n - 1), std: fromBuffer(r.series[k]!.std, 2 * n - 1), peak: r.series[k]!.peakDelta }));
  const s = series(all);
  const named = s.map((x) => x.kind).join(', ');
  const chart = el('canvas', { id: 'distance-chart', class: 'analysis-canvas', role: 'img', tabindex: '0', 'aria-label': `${named} by relative distance, layer ${layer} head ${head}` });
  const rowChart = el('canvas', { id: 'distance-row-chart', class: 'analysis-canvas', role: 'img', 'aria-label': 'Profile of the hovered query token' });
  const rowSentence = el('p', { id: 'distance-row-peaks', class: 'meta' }, ['Hover a token in the strip to see its own row profile.']);
  // BERT's four lines with a band each would bury one another: means only there (std in the readout), and the
  // names in a legend above the chart rather than over its lines.
  const bertSplit = all.split === 'bert-layer0';
  const legend = el('div', { id: 'distance-legend', class: 'legend' }, s.map((x) => {
    const sw = el('span', { class: 'swatch' });
    sw.style.backgroundColor = SERIES_COLORS[x.kind];
    return el('span', { class: 'legend-item' }, [sw, x.kind === 'c2c' ? 'c2c (dashed, reference)' : x.kind]);
  }));
  // Said under the chart, not over its lines: the far ends, averaged over few pairs, may run off the y axis.
  const clipNote = el('p', { id: 'distance-clip', class: 'meta' });
  body.append(sentence, ...(bertSplit ? [legend] : []), chart, clipNote, rowSentence, rowChart);
  const far = drawProfile(chart, w, h, n, s, !bertSplit, !bertSplit);
  clipNote.textContent = far === undefined ? '' : `The y axis fits |δ| ≤ ${far} (at least a quarter of the diagonal’s pairs); the means beyond, over few pairs, run off it.`;
  clipNote.hidden = far === undefined;
  // c2c is drawn for reference; the sentence is about what position does.
  const told = (xs: ProfileLine[]) => xs.filter((x) => x.kind !== 'c2c' || xs.length === 1);
  sentence.textContent = s.length
    ? `Layer ${layer}, head ${head}: ` + told(s).map((x) => `${x.kind} ${peakSentence(x.peak)}`).join('; ') + (all.series.probs ? `; attention ${peakSentence(all.series.probs.peakDelta)}.` : '.')
    : 'This model has no relative-position terms (c2p, p2c).';
  chart.addEventListener('mousemove', (e) => {
    const b = chart.getBoundingClientRect();
    const k = Math.floor(((e.clientX - b.left) / b.width) * (2 * n - 1));
    if (k < 0 || k >= 2 * n - 1) return;
    const d = k - (n - 1);
    readout(`δ = ${d} (key ${d > 0 ? `${d} to the left` : d < 0 ? `${-d} to the right` : 'is the query'}; ${n - Math.abs(d)} pairs): ` + s.map((x) => `${x.kind} mean ${formatValue(x.mean[k])} ± ${formatValue(x.std[k])}`).join(', '));
  });
  const first = s.find((x) => x.kind !== 'c2c') ?? s[0];
  picture = { canvas: chart, values: Float32Array.from(first?.mean ?? []), rows: 1, cols: first ? 2 * n - 1 : 0, range: valueRange(Float32Array.from(first?.mean ?? [0]).map((v) => (Number.isFinite(v) ? v : 0)), true), lut: makeLut(ctx.state.colorScale, true), title: `${first?.kind ?? 'c2p'} mean by δ, layer ${layer} head ${head}` };
  let seq = 0;
  const follow = async (i: number | null) => {
    const mine = ++seq;
    if (i === null) {
      drawProfile(rowChart, w, 140, n, [], false, !bertSplit);
      rowSentence.textContent = 'Hover a token in the strip to see its own row profile.';
      return;
    }
    const r = await ctx.request({ type: 'distance', layer, head, query: i });
    if (mine !== seq || !ctx.isCurrent()) return;
    const rs = series(r);
    drawProfile(rowChart, w, 140, n, rs, false, !bertSplit);
    rowSentence.textContent = `Query #${i} “${tok(ctx, i)}”: ` + told(rs).map((x) => `${x.kind} ${peakSentence(x.peak)}`).join('; ');
  };
  hoverHook = (i) => void follow(i);
  void follow(ctx.state.pinned);
}

/** Line chart of mean per δ with a ±std band; x from δ = −(n−1) to n−1, zero line and δ = 0 marked. c2c, when
 *  drawn beside position terms, is a thin dashed reference line without a band. */
/** Returns the |δ| beyond which lines leave the plot, when some do. */
function drawProfile(c: HTMLCanvasElement, w: number, h: number, n: number, s: ProfileLine[], withStd: boolean, names = true): number | undefined {
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  c.style.width = `${w}px`;
  c.style.height = `${h}px`;
  const g = c.getContext('2d');
  if (!g) return undefined;
  g.scale(dpr, dpr);
  const fg = getComputedStyle(document.body).getPropertyValue('--vscode-foreground').trim() || '#888';
  g.clearRect(0, 0, w, h);
  const pad = { l: 44, r: 8, t: 8, b: 20 };
  const m = 2 * n - 1;
  const reference = (x: ProfileLine) => x.kind === 'c2c' && s.length > 1;
  const band = (x: ProfileLine) => withStd && !reference(x);
  // The y axis fits the distances with at least a quarter of the diagonal's pairs (the peak rule's): the last few
  // δ average one or two cells and would otherwise set the scale and flatten everything else.
  const far = n - Math.ceil(n / 4);
  const near = (k: number) => Math.abs(k - (n - 1)) <= far;
  const masked = (v: Float32Array) => v.map((x, k) => (near(k) ? x : NaN));
  const yr = profileRange(s.map((x) => ({ mean: masked(x.mean), std: band(x) ? x.std : new Float32Array(x.std.length) })));
  const beyond = s.some((x) => x.mean.some((v, k) => !near(k) && Number.isFinite(v) && (v < yr.min || v > yr.max)));
  const X = (k: number) => pad.l + ((k + 0.5) / m) * (w - pad.l - pad.r);
  const Y = (v: number) => pad.t + (1 - (v - yr.min) / (yr.max - yr.min)) * (h - pad.t - pad.b);
  g.strokeStyle = fg;
  g.globalAlpha = 0.4;
  g.beginPath();
  if (yr.min < 0 && yr.max > 0) {
    g.moveTo(pad.l, Y(0));
    g.lineTo(w - pad.r, Y(0));
  }
  g.moveTo(X(n - 1), pad.t);
  g.lineTo(X(n - 1), h - pad.b);
  g.stroke();
  g.globalAlpha = 1;
  g.fillStyle = fg;
  g.font = '11px sans-serif';
  g.fillText(formatValue(yr.max), 2, pad.t + 8);
  g.fillText(formatValue(yr.min), 2, h - pad.b);
  g.fillText(`δ = −${n - 1}`, pad.l, h - 4);
  g.fillText('0', X(n - 1) - 3, h - 4);
  g.fillText(`+${n - 1}`, w - pad.r - 28, h - 4);
  g.save();
  g.beginPath();
  g.rect(pad.l, pad.t, w - pad.l - pad.r, h - pad.t - pad.b);
  g.clip();
  s.forEach((x) => {
    const col = SERIES_COLORS[x.kind];
    if (band(x)) {
      g.fillStyle = col;
      g.globalAlpha = 0.15;
      for (let k = 0; k < m; k++) {
        if (!Number.isFinite(x.mean[k])) continue;
        const bw = Math.max(1, (w - pad.l - pad.r) / m);
        g.fillRect(X(k) - bw / 2, Y(x.mean[k] + x.std[k]), bw, Math.max(1, Y(x.mean[k] - x.std[k]) - Y(x.mean[k] + x.std[k])));
      }
      g.globalAlpha = 1;
    }
    g.strokeStyle = col;
    // Over a hundred distances a 1.5 px line fills the plot: thinner lines stay apart.
    g.lineWidth = reference(x) || m > 100 ? 1 : 1.5;
    g.setLineDash(reference(x) ? [4, 3] : []);
    g.beginPath();
    let started = false;
    for (let k = 0; k < m; k++) {
      if (!Number.isFinite(x.mean[k])) continue;
      if (!started) g.moveTo(X(k), Y(x.mean[k]));
      else g.lineTo(X(k), Y(x.mean[k]));
      started = true;
    }
    g.stroke();
    g.setLineDash([]);
  });
  g.restore();
  if (names) {
    s.forEach((x, idx) => {
      g.fillStyle = SERIES_COLORS[x.kind];
      g.fillText(x.kind, w - pad.r - 40, pad.t + 12 + idx * 13);
    });
  }
  return beyond ? far : undefined;
}

// ---- 4. bucket lens ----
async function buckets(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const r = await ctx.request({ type: 'buckets' });
  if (!ctx.isCurrent()) return;
  const n = r.n;
  const zoneOf = fromBuffer(r.zoneOf, n * n);
  const rowOf = fromBuffer(r.rowOf, n * n);
  const lut = new Uint8ClampedArray(256 * 4);
  // Three-entry palette spread over the LUT: zone codes 0, 1, 2 map to indices 0, 128, 255 of range [0, 2].
  for (let k = 0; k < 256; k++) lut.set([...ZONE_COLORS[r.zones[k < 64 ? 0 : k < 192 ? 1 : 2]], 255], k * 4);
  const range: Range = { min: 0, max: 2, signed: false };
  const c = matrixCanvas('buckets-matrix', zoneOf, n, n, range, lut, sidePx(n, 2), 'Bucket zones: rows queries, columns keys');
  const byRow = new Map(r.groups.map((g) => [g.row, g]));
  onCell(c, n, (i, j) => {
    const k = i * n + j;
    const row = rowOf[k];
    readout(bucketPairText(i, j, r.zones[zoneOf[k]], row, byRow.get(row)));
  });
  const legend = el('div', { id: 'buckets-legend', class: 'legend' }, r.zones.map((z) => swatch(ZONE_COLORS[z], ZONE_TEXT[z])));
  const summary = el('ul', { id: 'buckets-summary', class: 'meta' }, bucketSummary(r.groups, r.mid).map((line) => el('li', {}, [line])));
  body.append(el('div', { class: 'analysis-row' }, [c, el('div', {}, [legend, summary])]));
  picture = { canvas: c, values: zoneOf, rows: n, cols: n, range, lut, title: 'Relative-position bucket zones' };
}

// ---- 5. rollout ----
async function rollout(body: HTMLElement, ctx: ViewContext): Promise<void> {
  // BERT's score has no terms to leave out: its rollout is the real attention's only.
  const bert = isBertModel(ctx.init.model);
  const picker = presetPicker(ctx, 'rollout-preset', true);
  const preset = bert ? 'all' : (picker.value as AblationPresetName);
  if (!bert) body.append(el('div', { class: 'analysis-controls' }, [el('label', {}, ['Terms ', picker])]));
  const [real, abl] = await Promise.all([
    ctx.request({ type: 'rollout', preset: 'all' }),
    preset === 'all' ? Promise.resolve(undefined) : ctx.request({ type: 'rollout', preset }),
  ]);
  if (!ctx.isCurrent()) return;
  const n = real.n;
  const rv = fromBuffer(real.data, n * n);
  const av = abl ? fromBuffer(abl.data, n * n) : undefined;
  const lut = makeLut(ctx.state.colorScale, false, themeKind());
  const range = jointLimits(av ? [rv, av] : [rv], false);
  const px = sidePx(n, av ? 2 : 1.6);
  const cReal = matrixCanvas('rollout-real', rv, n, n, range, lut, px, 'Rollout of the real attention');
  const figs = [el('figure', { class: 'analysis-fig' }, [cReal, el('figcaption', { class: 'meta' }, [`real, layers ${real.layers[0]}–${real.layers[real.layers.length - 1]} (${limitsText(range)})`])])];
  const canv: [HTMLCanvasElement, Float32Array][] = [[cReal, rv]];
  if (av) {
    const cAbl = matrixCanvas('rollout-ablated', av, n, n, range, lut, px, `Rollout keeping ${PRESET_LABELS[preset]}`);
    figs.push(el('figure', { class: 'analysis-fig' }, [cAbl, el('figcaption', { class: 'meta' }, [PRESET_LABELS[preset]])]));
    canv.push([cAbl, av]);
  }
  body.append(el('div', { class: 'analysis-row' }, figs));
  for (const [c] of canv) {
    onCell(c, n, (i, j) => {
      const k = i * n + j;
      readout(`query #${i} “${tok(ctx, i)}” ← key #${j} “${tok(ctx, j)}”: rollout ${formatValue(rv[k])}` + (av ? `, ${preset} ${formatValue(av[k])}` : ''));
    });
  }
  const shown = canv[canv.length - 1];
  picture = { canvas: shown[0], values: shown[1], rows: n, cols: n, range, lut, title: `Attention rollout (${preset})` };
}

// ---- 6. selection diff (current − previous explain) ----
async function diff(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const { layer, head, term } = ctx.state;
  const r = await ctx.request({ type: 'diff', layer, head, kind: term });
  if (!ctx.isCurrent()) return;
  if (!r.hasPrevious) {
    body.append(el('p', { id: 'diff-empty', class: 'caption' }, [DIFF_EMPTY]));
    return;
  }
  const P = r.pairs.length;
  body.append(el('p', { id: 'diff-summary', class: 'caption' }, [diffCaption(term, layer, head, P, r.nB, r.nA, ctx.init.run ? 'intervened − plain run' : undefined)]));
  const mismatch = diffMismatch(P, r.nB, r.nA);
  if (mismatch) body.append(el('p', { id: 'diff-mismatch', class: 'caption warning', role: 'alert' }, [mismatch]));
  if (P === 0) {
    body.append(el('p', { class: 'meta' }, ['No token of this text matches the previous one; nothing to compare.']));
    return;
  }
  const values = fromBuffer(r.data, P * P);
  const range = jointLimits([values], true);
  const lut = makeLut(ctx.state.colorScale, true, themeKind());
  const c = matrixCanvas('diff-matrix', values, P, P, range, lut, sidePx(P, 1.6), `Current minus previous ${term}, ${P} matched tokens: rows queries, columns keys`);
  const labels = el(
    'ol',
    { id: 'diff-labels', class: 'diff-labels meta', start: '0', 'aria-label': 'Matched tokens (rows and columns, in order)' },
    r.labels.map((t, p) => el('li', { 'data-p': String(p), title: `previous #${r.pairs[p][0]}, current #${r.pairs[p][1]}` }, [pieceLabel(t)])),
  );
  body.append(
    el('div', { class: 'analysis-row' }, [
      el('figure', { class: 'analysis-fig' }, [c, el('figcaption', { class: 'meta' }, [`current − previous (${limitsText(range)})`])]),
      labels,
    ]),
  );
  onCell(c, P, (p, q) => {
    const [ap, bp] = r.pairs[p];
    const [aq, bq] = r.pairs[q];
    readout(`query “${pieceLabel(r.labels[p])}” (#${ap} → #${bp}) → key “${pieceLabel(r.labels[q])}” (#${aq} → #${bq}): current − previous ${term} = ${formatValue(values[p * P + q])}`);
  });
  picture = { canvas: c, values, rows: P, cols: P, range, lut, title: `Current − previous ${term}, layer ${layer} head ${head}` };
}
