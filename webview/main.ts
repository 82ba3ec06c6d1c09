// The DeBERTa Lens view: token strip, heatmap with hover readout, head grid and side-by-side compare.
// The maths lives in the pure modules beside this file; this one owns the DOM and the message loop.
import type { MatrixKind } from '../src/shared/kinds';
import {
  fromBuffer,
  PROTOCOL_VERSION,
  RequestTracker,
  type HeadsResponse,
  type HostToWebview,
  type OverviewResponse,
  type PersistedState,
  type RequestBody,
  type ResponseBody,
  type RowResponse,
  type SliceResponse,
  type ViewInit,
  type WebviewToHost,
} from '../src/shared/protocol';
import { LruCache } from './cache';
import { paintRequest, prefetchPlan, sliceValues, withExactExtent, type At } from './slice-fetch';
import { describeRange, makeLut, normaliseRows, robustRange, valueRange, type Range } from './colors';
import { $, el, revealWithin, themeKind } from './dom';
import { compareModelsButton } from './compare-button';
import { Heatmap } from './heatmap';
import { withAxisLabels } from './grid-labels';
import { formatSigned, formatValue } from '../src/shared/format';
import { isSignedKind, KIND_LABELS, kindsOf } from '../src/shared/kinds';
import { cellAt, neighbours, type Neighbour, type SignedNeighbours } from '../src/shared/hover';
import { chipColours } from './strip-style';
import { idleReadout, readoutLines } from './readout';
import { showExportForm } from './export-form';
import { pieceLabel } from '../src/shared/token-layout';
import { layoutTokens } from '../src/shared/token-layout';
import { applyAction, keyToAction, reconcileState, toggleCompare, VIEW_CONTROLS, type ViewState } from './nav';
import { currentPicture, hoverToken, paintInto, renderAnalysis } from './views';
import { heatmapSvg, mergeCaption, VIEW_TITLES } from './views-model';
import { connectRuns, receiveRun, showRunBanner } from './run-channel';
import { ANALYSIS_VIEWS, EXPORT_FORMATS, type BucketsResponse, type AggregateResponse, type AnalysisView, type ExportFormat } from '../src/shared/protocol';
import type { MergeModeName, ProtocolToken, WordGroupInfo, WordsResponse } from '../src/shared/protocol';
import { PredictionsPanel, rowOfPiece, stripContext } from './predictions';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: PersistedState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
connectRuns((m) => vscode.postMessage(m));
const TOP_K = 8;
const LABELLED = 3;
/** Raw terms: keys that lower the score, shown apart in the strip's second colour. */
const TOP_NEGATIVE = 4;
const GRID_SIZE = 96; // small multiples are block-averaged to at most this many cells a side

// ---------- state ----------
let init: ViewInit | undefined;
let kinds: MatrixKind[] = [];
let state: ViewState | undefined;
/** Query row under the pointer or keyboard cursor (strip, heatmap or editor); `pinned` overrides it. */
let hoverI: number | null = null;
let hoverJ: number | null = null;
/** The heatmap on screen: raw `values` (hover, readout) and the `shown` ones the colours come from (row-scaled or not). */
let current: { values: Float32Array; shown: Float32Array; range: Range; n: number; key: string } | undefined;
/** Word groups the heatmap and the strip show (word merging on, heatmap view); strip/heatmap index = group. */
let merged: WordGroupInfo[] | undefined;
/** What the strip currently shows ('' = pieces, else the groups' key), so it is rebuilt only on a change. */
let stripKey = '';
let sentHover = '';
const tracker = new RequestTracker<ResponseBody>();
const cache = new LruCache<string, ResponseBody>(48);

// ---------- DOM ----------
const app = $('#app');
const heatmap = new Heatmap({
  hover: (i, j) => {
    hoverFromStrip = false;
    setHover(i, j);
  },
  click: () => {
    if (hoverI !== null) pin(state?.pinned === hoverI ? null : hoverI, hoverJ);
  },
});

function post(m: WebviewToHost): void {
  vscode.postMessage(m);
}

const predictions = new PredictionsPanel({ post, hover: (p) => setHover(rowOfPiece(p, merged), null) });

function save(): void {
  if (state) vscode.setState(state);
}

// ---------- requests ----------
function keyOf(b: RequestBody): string {
  return JSON.stringify(b);
}

/** Requests in flight by key: a prefetch and the user's own request for the same matrix share one answer. */
const inflight = new Map<string, Promise<ResponseBody>>();

async function request<T extends ResponseBody>(body: RequestBody): Promise<T> {
  const k = keyOf(body);
  const hit = cache.get(k);
  if (hit) return hit as T;
  if (!init) throw new Error('no result');
  const pending = inflight.get(k);
  if (pending) return (await pending) as T;
  const { id, promise } = tracker.open();
  post({ type: 'request', id, resultId: init.resultId, body });
  inflight.set(k, promise);
  try {
    const res = (await promise) as T;
    cache.set(k, res);
    return res;
  } finally {
    inflight.delete(k);
  }
}

/**
 * Once a heatmap has been on screen for a moment, fetch what a person most likely opens next (the neighbouring
 * heads, the next term, the next layer) while nothing else is asked: switching to them is then a repaint, not
 * a round trip. The pause keeps prefetches out of the way of someone stepping quickly (the host answers one
 * request at a time, so a prefetch in flight would delay the next real one).
 */
function prefetchAround(layer: number, head: number, term: MatrixKind): void {
  if (!init) return;
  const at = { layer, head, term };
  const next = prefetchPlan(at, lastPainted, kinds, init.model.layers, init.model.heads);
  lastPainted = at;
  // Only the latest paint fetches ahead: chains around matrices a quick reader has left would hold up the host.
  const gen = ++prefetchGen;
  const snapshot = init;
  let k = 0;
  const step = () => {
    if (gen !== prefetchGen || init !== snapshot || k >= next.length) return;
    if (inflight.size > 0) return void setTimeout(step, PREFETCH_AFTER_MS);
    void request(next[k++]).then(step, () => undefined);
  };
  // One more step the way the reader is going, at once (their next request then shares it); the rest when idle.
  const first = next.length ? request(next[k++]) : Promise.resolve();
  first.then(() => setTimeout(step, PREFETCH_AFTER_MS), () => undefined);
}
let prefetchGen = 0;
/** The matrix painted last: the direction a reader steps in is the first thing fetched ahead. */
let lastPainted: At | undefined;
const PREFETCH_AFTER_MS = 400;

async function getSlice(layer: number, head: number, kind: MatrixKind): Promise<Float32Array> {
  const r = await request<SliceResponse>({ type: 'slice', layer, head, kind });
  return fromBuffer(r.data, r.n * r.n);
}

async function getRow(layer: number, head: number, i: number): Promise<Partial<Record<MatrixKind, Float32Array>>> {
  const r = await request<RowResponse>({ type: 'row', layer, head, i });
  const out: Partial<Record<MatrixKind, Float32Array>> = {};
  for (const [k, buf] of Object.entries(r.rows)) if (buf) out[k as MatrixKind] = fromBuffer(buf, r.n);
  rowCache.set(`${layer}/${head}/${i}`, out);
  return out;
}

function reportError(e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  if (message === 'this result has been replaced' || message === 'superseded') return;
  $('#status').textContent = message;
  post({ type: 'log', level: 'error', message });
}

// ---------- layout ----------
function buildShell(): void {
  if (!init || !state) return;
  const m = init.model;
  const option = (value: string, label: string) => el('option', { value }, [label]);
  const term = el('select', { id: 'term', 'aria-label': 'Term' }, kinds.map((k) => option(k, KIND_LABELS[k])));
  const layer = el('select', { id: 'layer', 'aria-label': 'Layer' }, m.layers.map((l) => option(String(l), `Layer ${l}`)));
  const head = el(
    'select',
    { id: 'head', 'aria-label': 'Head' },
    [...Array.from({ length: m.heads }, (_, h) => option(String(h), `Head ${h}`)), option('mean', 'Mean of heads'), option('max', 'Max of heads')],
  );
  const discount = el('input', { id: 'discount-special', type: 'checkbox', 'aria-label': 'Discount special tokens ([CLS], [SEP]) in probs' });
  const scale = el('select', { id: 'color-scale', 'aria-label': 'Colour scale', title: 'Colour scale: the theme’s (diverging for signed terms, sequential for probs) or viridis' }, [
    option('diverging', 'Theme colours'),
    option('viridis', 'Viridis'),
  ]);
  // Cut to the panel's width in the toolbar; whole in its title.
  const about = `${m.name} · ${m.type} · ${m.layers.length}×${m.heads} heads · ${init.tokens.length} tokens · ${m.executionProvider} · ${Math.round(init.ms)} ms`;
  const btn = (id: string, label: string, title: string) => el('button', { id, type: 'button', title, 'aria-label': title }, [label]);
  const toolbar = el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'View controls' }, [
    el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'View' }, [
      el('button', { id: 'view-heatmap', type: 'button', role: 'tab', 'aria-controls': 'heatmap-view' }, ['Heatmap']),
      el('button', { id: 'view-heads', type: 'button', role: 'tab', 'aria-controls': 'heads-view' }, ['Compare heads']),
      ...ANALYSIS_VIEWS.map((v) => el('button', { id: `view-${v}`, type: 'button', role: 'tab', 'aria-controls': 'analysis-view' }, [VIEW_TITLES[v]])),
    ]),
    el('label', { id: 'term-group', title: 'Term' }, [term]),
    el('span', { class: 'group', id: 'layer-group' }, [btn('layer-prev', '‹', 'Previous layer ([)'), layer, btn('layer-next', '›', 'Next layer (])')]),
    el('span', { class: 'group', id: 'head-group' }, [btn('head-prev', '‹', 'Previous head (,)'), head, btn('head-next', '›', 'Next head (.)')]),
    el('label', { id: 'discount-group', title: 'Zero the [CLS]/[SEP] key columns of probs and renormalise each row' }, [discount, ' no specials']),
    el('span', { class: 'group', id: 'merge-group' }, [
      el('label', { title: 'Heatmap rows/columns and the token strip show whole words: rows average a word’s pieces, columns add them up (probs)' }, [
        el('input', { id: 'merge-words', type: 'checkbox', 'aria-label': 'Merge pieces into words' }),
        ' merge into',
      ]),
      el('select', { id: 'merge-mode', 'aria-label': 'Merge pieces into' }, [option('words', 'words'), option('identifiers', 'identifiers')]),
    ]),
    el('label', { id: 'colours-group' }, [scale]),
    el('span', { class: 'group', id: 'export-group', role: 'group', 'aria-label': 'Export' }, [
      'Export ',
      ...EXPORT_FORMATS.map((f) => btn(`export-${f}`, f.toUpperCase(), exportTitle(f))),
    ]),
    compareModelsButton(btn, post),
    // Always laid out (only its visibility changes), so showing it never reflows the toolbar.
    el('span', { id: 'busy', class: 'meta busy', role: 'status' }, ['computing…']),
    el('span', { id: 'meta', class: 'meta', title: about }, [about]),
  ]);

  const tokens = el('div', { id: 'tokens', role: 'listbox', tabindex: '0', 'aria-label': 'Tokens (arrow keys move, Enter pins, Escape clears)' });
  fillStrip(tokens, undefined);

  const scaling = el('select', { id: 'scaling', 'aria-label': 'Colour mapping', title: 'How values map to colours' }, [
    option('linear', 'linear, robust limits'),
    option('log', 'log (probs)'),
    option('row', 'each row to its max'),
  ]);
  // The legend sits above the maps (heatmap and head grid alike), so it is on screen whenever a map is.
  const legend = el('div', { id: 'legend', class: 'legend' }, [
    el('label', {}, ['Colour ', scaling]),
    el('span', { class: 'legend-scale' }, [
      el('span', { id: 'legend-min' }),
      el('canvas', { id: 'legend-bar', width: '256', height: '1', 'aria-hidden': 'true' }),
      el('span', { id: 'legend-max' }),
    ]),
    el('span', { id: 'legend-label', class: 'meta' }),
  ]);
  const heatmapView = el('section', { id: 'heatmap-view', role: 'tabpanel', 'aria-label': 'Heatmap' }, [
    heatmap.root,
    el('p', { id: 'merge-caption', class: 'meta', hidden: '' }),
  ]);
  const headsView = el('section', { id: 'heads-view', role: 'tabpanel', 'aria-label': 'Compare heads', hidden: '' }, [
    el('h2', {}, ['Layer × head overview']),
    el('p', { id: 'overview-caption', class: 'meta' }),
    el('div', { id: 'overview-box' }, [
      el('canvas', { id: 'overview', tabindex: '0', role: 'img', 'aria-label': 'Overview: rows are layers, columns are heads. Arrow keys move, Enter opens.' }),
    ]),
    el('h2', { id: 'grid-title' }, ['Heads']),
    el('div', { id: 'head-grid', class: 'head-grid' }),
    el('h2', {}, ['Side by side']),
    el('p', { id: 'compare-hint', class: 'meta' }, ['Tick “compare” on two or more heads to see them side by side; hover is linked.']),
    el('div', { id: 'compare', class: 'compare' }),
  ]);

  const analysisView = el('section', { id: 'analysis-view', role: 'tabpanel', 'aria-label': 'Analysis', hidden: '' });
  app.replaceChildren(
    toolbar,
    el('div', { id: 'export-form', class: 'export-form', role: 'dialog', 'aria-label': 'Export choices', hidden: '' }),
    tokens,
    predictions.mount(init.resultId, init.tokens),
    el('div', { id: 'readout', class: 'readout', 'aria-live': 'polite', role: 'status' }, ['Hover a token or a heatmap cell.']),
    el('div', { id: 'status', class: 'status', role: 'alert' }),
    legend,
    heatmapView,
    headsView,
    analysisView,
    el('p', { class: 'keys meta' }, ['Keys: [ ] layer · , . head · 1–5 term · h heatmap · g heads · Esc clear']),
  );
  app.dataset.state = 'ready';
  stripKey = '';
  wireControls();
  const bar = $<HTMLCanvasElement>('#legend-bar');
  bar.style.width = '160px';
  bar.style.height = '10px';
}

/** Fills the token strip with the pieces, or with word groups (then `data-i` is the group index). */
function fillStrip(box: HTMLElement, groups: WordGroupInfo[] | undefined): void {
  if (!init) return;
  const items: ProtocolToken[] = groups
    ? groups.map((g, w) => ({ i: w, text: g.text, start: g.start, end: g.end, special: g.special }))
    : init.tokens;
  const rows: HTMLElement[] = [];
  for (const line of layoutTokens(init.text, items)) {
    const row = el('div', { class: 'line' });
    for (const seg of line) {
      if (seg.kind === 'gap') row.append(el('span', { class: 'gap' }, [seg.text]));
      else {
        row.append(
          el(
            'span',
            {
              class: seg.special ? 'tok special' : groups ? 'tok word' : 'tok',
              'data-i': String(seg.i),
              role: 'option',
              'aria-selected': 'false',
              title: stripTitle(seg.i),
              'data-vscode-context': stripContext(seg.i, groups),
            },
            [seg.text],
          ),
        );
      }
    }
    rows.push(row);
  }
  box.replaceChildren(...rows);
}

/** Shows pieces or the given groups in the strip, rebuilding it only when that changes. */
function setStrip(groups: WordGroupInfo[] | undefined): void {
  merged = groups;
  const key = groups ? groups.map((g) => g.pieces.join(',')).join('|') : '';
  if (key === stripKey) return;
  stripKey = key;
  unlight();
  keyEl = null;
  fillStrip($('#tokens'), groups);
}

/** Strip / readout label of row k: a piece, or a merged word with its pieces. */
function labelOf(k: number): string {
  if (merged) return merged[k]?.text ?? '';
  const t = init?.tokens[k];
  return t ? (t.special ? t.text : pieceLabel(t.text)) : '';
}

function stripTitle(k: number): string {
  const g = merged?.[k];
  return g ? `word #${k} ${g.text} (pieces ${g.pieces.map((p) => init?.tokens[p]?.text ?? p).join(' + ')})` : `#${k} ${labelOf(k)}`;
}

/** Rows on screen in the heatmap and the strip: groups when merged, else tokens. */
function stripCount(): number {
  return merged ? merged.length : (init?.tokens.length ?? 0);
}

// ---------- control wiring ----------
function wireControls(): void {
  const term = $<HTMLSelectElement>('#term');
  const layer = $<HTMLSelectElement>('#layer');
  const head = $<HTMLSelectElement>('#head');
  const scale = $<HTMLSelectElement>('#color-scale');
  term.addEventListener('change', () => update({ term: term.value as MatrixKind }));
  layer.addEventListener('change', () => update({ layer: Number(layer.value) }));
  head.addEventListener('change', () =>
    head.value === 'mean' || head.value === 'max' ? update({ headAgg: head.value }) : update({ head: Number(head.value), headAgg: null }),
  );
  const discount = $<HTMLInputElement>('#discount-special');
  discount.addEventListener('change', () => update({ discountSpecial: discount.checked }));
  const mergeBox = $<HTMLInputElement>('#merge-words');
  const mergeMode = $<HTMLSelectElement>('#merge-mode');
  // A pin names a row of what is on screen (piece or word), so switching between them drops it.
  mergeBox.addEventListener('change', () => update({ merge: mergeBox.checked ? (mergeMode.value as MergeModeName) : null, pinned: null }));
  mergeMode.addEventListener('change', () => {
    if (mergeBox.checked) update({ merge: mergeMode.value as MergeModeName, pinned: null });
  });
  for (const f of EXPORT_FORMATS) {
    $(`#export-${f}`).addEventListener('click', () => {
      if (f === 'png' || f === 'svg' || !init || !state) return exportView(f);
      showExportForm($('#export-form'), f, init.model, init.tokens.length, { layer: state.layer, term: state.term }, (c) => post({ type: 'export', ...c }));
    });
  }
  for (const v of ANALYSIS_VIEWS) $(`#view-${v}`).addEventListener('click', () => update({ view: v }));
  scale.addEventListener('change', () => update({ colorScale: scale.value as ViewState['colorScale'] }));
  $('#layer-prev').addEventListener('click', () => act({ type: 'layer', delta: -1 }));
  $('#layer-next').addEventListener('click', () => act({ type: 'layer', delta: 1 }));
  $('#head-prev').addEventListener('click', () => act({ type: 'head', delta: -1 }));
  $('#head-next').addEventListener('click', () => act({ type: 'head', delta: 1 }));
  $('#view-heatmap').addEventListener('click', () => update({ view: 'heatmap' }));
  $('#view-heads').addEventListener('click', () => update({ view: 'heads' }));

  const tokens = $('#tokens');
  tokens.addEventListener('mouseover', (e) => {
    const i = tokenIndex(e.target);
    hoverFromStrip = true;
    if (i !== null) setHover(i, null);
  });
  tokens.addEventListener('mouseleave', () => setHover(null, null));
  tokens.addEventListener('click', (e) => {
    const i = tokenIndex(e.target);
    if (i !== null) pin(state?.pinned === i ? null : i);
  });
  tokens.addEventListener('keydown', (e) => {
    if (!init) return;
    const n = stripCount();
    const at = state?.pinned ?? hoverI ?? -1;
    let next: number | null = null;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = Math.min(n - 1, at + 1);
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = n - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      if (hoverI !== null) pin(state?.pinned === hoverI ? null : hoverI);
      e.preventDefault();
      return;
    }
    if (next === null) return;
    e.preventDefault();
    if (state?.pinned !== null && state?.pinned !== undefined) pin(next);
    else setHover(next, null);
    revealWithin(tokens, tokEl(next));
  });

  const scalingSel = $<HTMLSelectElement>('#scaling');
  scalingSel.addEventListener('change', () => update({ scaling: scalingSel.value as ViewState['scaling'] }));
  heatmap.canvas.addEventListener('keydown', (e) => {
    if (!init) return;
    const n = current?.n ?? init.tokens.length;
    let i = hoverI ?? state?.pinned ?? 0;
    let j = hoverJ ?? 0;
    if (e.key === 'ArrowDown') i = Math.min(n - 1, i + 1);
    else if (e.key === 'ArrowUp') i = Math.max(0, i - 1);
    else if (e.key === 'ArrowRight') j = Math.min(n - 1, j + 1);
    else if (e.key === 'ArrowLeft') j = Math.max(0, j - 1);
    else if (e.key === 'Enter' || e.key === ' ') {
      pin(state?.pinned === i ? null : i, j);
      e.preventDefault();
      return;
    } else return;
    e.preventDefault();
    heatmap.reveal(i, j);
    if (state?.pinned !== null && state?.pinned !== undefined) pin(i, j);
    else setHover(i, j);
  });

  const overview = $<HTMLCanvasElement>('#overview');
  overview.addEventListener('click', (e) => {
    if (!init || !state) return;
    const rect = overview.getBoundingClientRect();
    const li = Math.floor(((e.clientY - rect.top) / rect.height) * init.model.layers.length);
    const h = Math.floor(((e.clientX - rect.left) / rect.width) * init.model.heads);
    const layerAt = init.model.layers[li];
    if (layerAt !== undefined && h >= 0 && h < init.model.heads) update({ layer: layerAt, head: h, view: 'heatmap' });
  });
  overview.addEventListener('keydown', (e) => {
    if (!init || !state) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      act({ type: 'layer', delta: e.key === 'ArrowDown' ? 1 : -1 });
      e.preventDefault();
    } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      act({ type: 'head', delta: e.key === 'ArrowRight' ? 1 : -1 });
      e.preventDefault();
    } else if (e.key === 'Enter') update({ view: 'heatmap' });
  });
}

function tokenIndex(target: EventTarget | null): number | null {
  const t = target instanceof HTMLElement ? target.closest<HTMLElement>('.tok') : null;
  return t?.dataset.i !== undefined ? Number(t.dataset.i) : null;
}

// Global shortcuts, unless the user is typing into a control that uses the key itself.
document.addEventListener('keydown', (e) => {
  if (!state || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target instanceof HTMLSelectElement && e.key.length === 1 && !'[],.'.includes(e.key)) return;
  const a = keyToAction(e.key, kinds);
  if (!a) return;
  e.preventDefault();
  if (a.type === 'clear') {
    hoverI = null;
    hoverJ = null;
  }
  act(a);
});

function act(a: Parameters<typeof applyAction>[1]): void {
  if (!state || !init) return;
  const next = applyAction(state, a, init.model.layers, init.model.heads);
  update(next);
}

// ---------- state transitions ----------
function update(patch: Partial<ViewState>): void {
  if (!state) return;
  const prev = state;
  state = { ...state, ...patch };
  save();
  syncControls();
  const matrixChanged =
    prev.layer !== state.layer ||
    prev.head !== state.head ||
    prev.term !== state.term ||
    prev.colorScale !== state.colorScale ||
    prev.headAgg !== state.headAgg ||
    prev.discountSpecial !== state.discountSpecial ||
    prev.preset !== state.preset ||
    prev.merge !== state.merge ||
    prev.scaling !== state.scaling;
  if (prev.view !== state.view || matrixChanged || patch.view !== undefined) void renderView();
  else refreshHover();
}

function syncControls(): void {
  if (!state) return;
  $<HTMLSelectElement>('#term').value = state.term;
  $<HTMLSelectElement>('#layer').value = String(state.layer);
  $<HTMLSelectElement>('#head').value = state.headAgg ?? String(state.head);
  const discount = $<HTMLInputElement>('#discount-special');
  discount.checked = !!state.discountSpecial;
  // Word merging pools raw slices (or head means); the special-token discount does not apply to it.
  discount.disabled = state.term !== 'probs' || !!state.merge;
  $<HTMLSelectElement>('#color-scale').value = state.colorScale;
  $<HTMLSelectElement>('#scaling').value = state.scaling ?? 'linear';
  $<HTMLInputElement>('#merge-words').checked = !!state.merge;
  if (state.merge) $<HTMLSelectElement>('#merge-mode').value = state.merge;
  const heat = state.view === 'heatmap';
  const applies = new Set(VIEW_CONTROLS[state.view]);
  for (const c of ['term', 'layer', 'head', 'discount', 'merge', 'colours'] as const) $(`#${c}-group`).hidden = !applies.has(c);
  $('#heatmap-view').hidden = !heat;
  $('#heads-view').hidden = state.view !== 'heads';
  $('#analysis-view').hidden = !isAnalysis(state.view);
  $('#legend').hidden = !applies.has('legend');
  // Analysis views have their own readout under their pictures.
  $('#readout').hidden = isAnalysis(state.view);
  for (const v of ['heatmap', 'heads', ...ANALYSIS_VIEWS]) $(`#view-${v}`).setAttribute('aria-selected', String(state.view === v));
  app.dataset.view = state.view;
}

function pin(i: number | null, j: number | null = null): void {
  if (!state) return;
  state = { ...state, pinned: i };
  save();
  hoverI = i;
  hoverJ = j;
  refreshHover();
}

function setHover(i: number | null, j: number | null): void {
  // While a token is pinned, pointer movement only moves the key (column) under inspection.
  if (state?.pinned !== null && state?.pinned !== undefined) {
    hoverI = state.pinned;
    hoverJ = j;
  } else {
    hoverI = i;
    hoverJ = j;
  }
  refreshHover();
}

// ---------- rendering ----------
let renderSeq = 0;

async function renderView(): Promise<void> {
  if (!state || !init) return;
  const seq = ++renderSeq;
  readThemeColors();
  // A view whose data takes a while (a layer computed on demand, term shares over every head) says so after a
  // moment, and the picture on screen is dimmed rather than blanked until the new one is painted.
  const busy = $('#busy');
  const timer = setTimeout(() => {
    if (seq !== renderSeq) return;
    busy.style.visibility = 'visible';
    app.dataset.busy = 'true';
  }, 150);
  try {
    $('#status').textContent = '';
    // Word merging is a heatmap feature: the other views index pieces, so the strip shows pieces there.
    if (state.view !== 'heatmap' || !state.merge) setStrip(undefined);
    if (state.view === 'heatmap') await renderHeatmap(seq);
    else if (state.view === 'heads') await renderHeads(seq);
    else if (isAnalysis(state.view)) await renderAnalysisView(state.view, seq);
    if (seq === renderSeq) refreshHover();
  } catch (e) {
    reportError(e);
  } finally {
    clearTimeout(timer);
    if (seq === renderSeq) {
      busy.style.visibility = 'hidden';
      delete app.dataset.busy;
    }
  }
}

function sizeCanvasCss(canvas: HTMLCanvasElement, px: number): void {
  canvas.style.width = `${px}px`;
  canvas.style.height = `${px}px`;
}

/** Side of the heatmap in CSS px: the panel's width less the row labels, at most 760, and above the fold. */
function heatmapPx(): number {
  const byWidth = document.body.clientWidth - 48 - 90;
  const byHeight = window.innerHeight - heatmap.canvasTop() - 12;
  return Math.max(240, Math.min(760, byWidth, byHeight));
}

function isAnalysis(v: string): v is AnalysisView {
  return (ANALYSIS_VIEWS as readonly string[]).includes(v);
}

/** Mean/max over heads, or special tokens discounted: the host reduces, the view only paints. */
function isAggregated(): boolean {
  return !!state && (!!state.headAgg || (!!state.discountSpecial && state.term === 'probs') || !!merged);
}

async function renderAnalysisView(view: AnalysisView, seq: number): Promise<void> {
  if (!state || !init) return;
  current = undefined;
  const snapshot = init;
  await renderAnalysis(view, $('#analysis-view'), {
    init: snapshot,
    state,
    request,
    open: (layer, head) => update({ layer, head, headAgg: null, view: 'heatmap' }),
    setPreset: (preset) => update({ preset }),
    isCurrent: () => seq === renderSeq && init === snapshot,
  });
}

function exportTitle(f: ExportFormat): string {
  switch (f) {
    case 'png':
      return 'Export the current view as a PNG image';
    case 'svg':
      return 'Export the current heatmap as an SVG image';
    case 'npz':
      return 'Export the whole result (every layer and term) as .npz';
    case 'json':
      return 'Export the whole result as JSON';
    case 'html':
      return 'Export a self-contained HTML report';
  }
}

/** The picture on screen: the analysis view's main canvas, or the heatmap. */
function exportPicture() {
  if (!state || !init) return undefined;
  if (isAnalysis(state.view)) return currentPicture();
  if (state.view === 'heatmap' && current) {
    const lut = makeLut(state.colorScale, current.range.signed, themeKind());
    const head = state.headAgg ?? `head ${state.head}`;
    return { canvas: heatmap.bitmap, values: current.shown, rows: current.n, cols: current.n, range: current.range, lut, title: `${state.term}, layer ${state.layer}, ${head}` };
  }
  return undefined;
}

/** PNG: the canvas scaled up with hard pixel edges; SVG: cell rectangles from the same values and colours. */
function imagePayload(format: 'png' | 'svg'): { dataUrl?: string; svg?: string; name: string } {
  const p = exportPicture();
  if (!p) throw new Error('nothing to export here: open the heatmap or an analysis view');
  const name = `${state?.view}-L${state?.layer}-${state?.headAgg ?? `H${state?.head}`}`;
  if (format === 'svg') {
    const labels = merged && p.rows === merged.length ? merged.map((g) => g.text) : init && p.rows === init.tokens.length ? init.tokens.map((t) => t.text) : undefined;
    return { svg: heatmapSvg(p.values, p.rows, p.cols, p.range, p.lut, { title: p.title, rowLabels: labels, colLabels: p.cols === p.rows ? labels : undefined }), name };
  }
  const scale = Math.max(1, Math.floor(1024 / Math.max(p.canvas.width, p.canvas.height)));
  const out = document.createElement('canvas');
  out.width = p.canvas.width * scale;
  out.height = p.canvas.height * scale;
  const ctx = out.getContext('2d');
  if (!ctx) throw new Error('this view cannot draw a PNG (no 2D canvas)');
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(p.canvas, 0, 0, out.width, out.height);
  return { dataUrl: out.toDataURL('image/png'), name };
}

function exportView(format: ExportFormat, requestId?: number): void {
  try {
    if (format === 'png' || format === 'svg') post({ type: 'export', format, requestId, ...imagePayload(format) });
    else post({ type: 'export', format, requestId });
  } catch (e) {
    reportError(e);
    if (requestId !== undefined) post({ type: 'export', format, requestId });
  }
}

async function renderHeatmap(seq: number): Promise<void> {
  if (!state || !init) return;
  const { layer, head, term } = state;
  let values: Float32Array;
  let aggKey = '';
  let words: WordsResponse | undefined;
  let extent: [number, number] | undefined;
  if (state.merge) {
    words = await request<WordsResponse>({ type: 'words', layer, head: state.headAgg ?? head, kind: term, mode: state.merge });
    values = fromBuffer(words.data, words.n * words.n);
    aggKey = `|words:${state.merge}|${state.headAgg ?? head}`;
  } else if (state.headAgg || (!!state.discountSpecial && term === 'probs')) {
    const pick = state.headAgg ?? head;
    const discount = !!state.discountSpecial && term === 'probs';
    const r = await request<AggregateResponse>({ type: 'aggregate', layer, head: pick, kind: term, discountSpecial: discount });
    values = fromBuffer(r.data, r.n * r.n);
    aggKey = `|${pick}|${discount}`;
  } else {
    const r = await request<SliceResponse>(paintRequest(layer, head, term));
    values = sliceValues(r);
    extent = r.extent;
  }
  if (seq !== renderSeq) return;
  setStrip(words?.groups);
  const n = words ? words.n : init.tokens.length;
  const signed = isSignedKind(term);
  const scaling = state.scaling ?? 'linear';
  const shown = scaling === 'row' ? normaliseRows(values, n, n) : values;
  const range = withExactExtent(robustRange(shown, signed, scaling), extent);
  const lut = makeLut(state.colorScale, signed, themeKind());
  current = { values, shown, range, n, key: `${layer}/${head}/${term}${aggKey}` };
  const mergeCap = $('#merge-caption');
  mergeCap.hidden = !words;
  mergeCap.textContent = words ? mergeCaption(term, words.mode, words.columns, words.n, init.tokens.length) : '';
  const labels = words ? words.groups.map((g) => g.text) : init.tokens.map((t) => (t.special ? t.text : pieceLabel(t.text)));
  heatmap.readTheme();
  heatmap.set({ values: shown, n, range, lut, labels }, heatmapPx());
  const canvas = heatmap.canvas;
  const what = `${state.headAgg ? `${state.headAgg} over heads` : `head ${head}`}${aggKey.endsWith('true') ? ', specials discounted' : ''}${words ? `, merged into ${words.mode}` : ''}`;
  canvas.setAttribute('aria-label', `Heatmap of ${term}, layer ${layer}, ${what}: ${n}×${n}, rows are queries, columns are keys. Arrow keys move, Enter pins.`);
  renderLegend(range, lut, term);
  if (aggKey) $('#legend-label').textContent += ` · ${what}`;
  if (!aggKey) prefetchAround(layer, head, term);
}

function renderLegend(range: Range, lut: Uint8ClampedArray, kind: MatrixKind): void {
  const bar = $<HTMLCanvasElement>('#legend-bar');
  const ctx = bar.getContext('2d');
  if (ctx) {
    const img = ctx.createImageData(256, 1);
    img.data.set(lut);
    ctx.putImageData(img, 0, 0);
  }
  $('#legend-min').textContent = `${range.percentile || range.log ? '≤ ' : ''}${formatValue(range.min)}`;
  $('#legend-max').textContent = `${range.percentile ? '≥ ' : ''}${formatValue(range.max)}`;
  $('#legend-label').textContent = describeRange(range, kind);
  $('#legend-label').title = $('#legend-label').textContent;
}

async function renderHeads(seq: number): Promise<void> {
  if (!state || !init) return;
  const { layer, term } = state;
  const [grid, ov] = await Promise.all([
    request<HeadsResponse>({ type: 'heads', layer, kind: term, maxSize: GRID_SIZE }),
    request<OverviewResponse>({ type: 'overview', kind: term }),
  ]);
  if (seq !== renderSeq) return;
  renderOverview(ov);
  const m = grid.size;
  const scaling = state.scaling ?? 'linear';
  const raw = fromBuffer(grid.data, grid.heads * m * m);
  // [heads, m, m] is heads·m rows of m: per-row scaling needs no reshaping.
  const all = scaling === 'row' ? normaliseRows(raw, grid.heads * m, m) : raw;
  const signed = isSignedKind(term);
  // One range for the layer so heads are comparable; robust, so one head's outliers do not fade the others.
  const range = robustRange(all, signed, scaling);
  const lut = makeLut(state.colorScale, signed, themeKind());
  renderLegend(range, lut, term);
  $('#grid-title').textContent = `Heads of layer ${layer} (${term}; click to open, tick to compare)`;
  const box = $('#head-grid');
  const cells: HTMLElement[] = [];
  for (let h = 0; h < grid.heads; h++) {
    const canvas = el('canvas', { class: 'thumb', 'aria-hidden': 'true' });
    paintInto(canvas, all.subarray(h * m * m, (h + 1) * m * m), m, m, range, lut);
    sizeCanvasCss(canvas, 112);
    const open = el('button', { type: 'button', class: 'open', 'data-head': String(h), 'aria-label': `Open head ${h} of layer ${layer}` }, [canvas, el('span', {}, [`L${layer} · head ${h}`])]);
    open.addEventListener('click', () => update({ head: h, view: 'heatmap' }));
    const box2 = el('input', { type: 'checkbox', class: 'cmp', 'data-head': String(h), 'aria-label': `Compare head ${h}` });
    box2.checked = state.compare.includes(h);
    box2.addEventListener('change', () => {
      if (!state) return;
      state = { ...state, compare: toggleCompare(state.compare, h) };
      save();
      for (const c of document.querySelectorAll<HTMLInputElement>('#head-grid input.cmp')) c.checked = state.compare.includes(Number(c.dataset.head));
      void renderCompare();
    });
    const cell = el('div', { class: h === state.head ? 'head-cell current' : 'head-cell', 'data-head': String(h) }, [
      open,
      el('label', { class: 'meta' }, [box2, ' compare']),
    ]);
    cells.push(cell);
  }
  box.replaceChildren(...cells);
  await renderCompare();
}

function renderOverview(ov: OverviewResponse): void {
  if (!state || !init) return;
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
  $('#overview-box').replaceChildren(withAxisLabels(canvas, ov.layers.map((l) => `L${l}`), Array.from({ length: H }, (_, h) => `H${h}`), cell, { rows: 'layer', cols: 'head' }));
  const li = ov.layers.indexOf(state.layer);
  const what = ov.metric === 'entropy' ? 'mean attention entropy (nats; dark = focused heads)' : `mean |${ov.kind}|`;
  $('#overview-caption').textContent = `Rows: layers ${ov.layers[0]}–${ov.layers[L - 1]}; columns: heads 0–${H - 1}; colour: ${what}, ${formatValue(range.min)} to ${formatValue(range.max)}. Current: layer ${state.layer}, head ${state.head} = ${li >= 0 ? formatValue(values[li * H + state.head]) : '–'}.`;
}

const comparePanes: { head: number; canvas: HTMLCanvasElement; overlay: HTMLCanvasElement; values: Float32Array; px: number }[] = [];

async function renderCompare(): Promise<void> {
  if (!state || !init) return;
  const heads = [...state.compare].sort((a, b) => a - b);
  const box = $('#compare');
  comparePanes.length = 0;
  if (heads.length < 2) {
    box.replaceChildren();
    $('#compare-hint').hidden = false;
    return;
  }
  $('#compare-hint').hidden = true;
  const { layer, term } = state;
  const slices = await Promise.all(heads.map((h) => getSlice(layer, h, term)));
  if (!state || state.layer !== layer || state.term !== term) return;
  const n = init.tokens.length;
  const signed = isSignedKind(term);
  // One robust range over every compared head, so equal colours mean equal values across panes.
  const joined = new Float32Array(slices.reduce((a, s) => a + s.length, 0));
  slices.reduce((at, s) => (joined.set(s, at), at + s.length), 0);
  const range = robustRange(joined, signed);
  const lut = makeLut(state.colorScale, signed, themeKind());
  const px = Math.max(n, Math.floor(Math.min(360, (document.body.clientWidth - 48) / Math.min(heads.length, 3))));
  const dpr = window.devicePixelRatio || 1;
  const panes = heads.map((h, k) => {
    const canvas = el('canvas', { class: 'compare-canvas', 'data-head': String(h), 'aria-label': `Layer ${layer} head ${h} ${term}`, role: 'img' });
    paintInto(canvas, slices[k], n, n, range, lut);
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
      if (hoverI !== null) pin(state?.pinned === hoverI ? null : hoverI, hoverJ);
    });
    comparePanes.push({ head: h, canvas, overlay, values: slices[k], px });
    return el('figure', { class: 'compare-pane', 'data-head': String(h) }, [
      el('div', { class: 'heatmap-wrap' }, [canvas, overlay]),
      el('figcaption', { class: 'meta' }, [`Layer ${layer} · head ${h}`]),
    ]);
  });
  box.replaceChildren(...panes);
  refreshHover();
}

// ---------- hover: strip highlights, overlays, readout ----------
let lit: HTMLElement[] = [];
let hoverSeq = 0;
/** Where the last hover came from: the strip scrolls neighbours into view only when the pointer is elsewhere. */
let hoverFromStrip = false;

/** Relative-position table row of every (query, key) pair, when the model has relative attention (log buckets). */
async function bucketRows(): Promise<{ rowOf: Float32Array; zoneOf: Float32Array; zones: string[]; n: number } | undefined> {
  if (!init || !init.model.terms.some((t) => t === 'c2p' || t === 'p2c')) return undefined;
  const r = await request<BucketsResponse>({ type: 'buckets' });
  return { rowOf: fromBuffer(r.rowOf, r.n * r.n), zoneOf: fromBuffer(r.zoneOf, r.n * r.n), zones: r.zones, n: r.n };
}
let buckets: Awaited<ReturnType<typeof bucketRows>> | null = null;

function refreshHover(): void {
  if (!state || !init) return;
  const i = hoverI;
  const j = hoverJ;
  heatmap.setHover(i, j);
  predictions.focus(i, state.pinned !== null, merged);
  for (const p of comparePanes) drawOverlay(p.overlay, init.tokens.length, i, j);
  const msg = `${state.pinned ?? ''}|${i ?? ''}|${state.layer}|${state.head}|${state.term}`;
  if (msg !== sentHover) {
    sentHover = msg;
    // The editor lights pieces: a merged word is reported as its first piece.
    const piece = i !== null && merged ? (merged[i]?.pieces[0] ?? null) : i;
    post({ type: 'hover', resultId: init.resultId, hover: { i: piece, layer: state.layer, head: state.head, kind: state.term, pinned: state.pinned !== null } });
  }
  if (i === null) {
    if (isAnalysis(state.view)) hoverToken(null);
    unlight();
    renderReadoutIdle();
    return;
  }
  const seq = ++hoverSeq;
  const { layer, head, term } = state;
  if (isAnalysis(state.view)) hoverToken(i);
  const show = (rows: Partial<Record<MatrixKind, Float32Array>>, exact: boolean) => {
    if (seq !== hoverSeq || !init) return;
    const row = rows[term];
    if (!row) return;
    const nbs = neighbours(row, term, TOP_K);
    // Moving along one row only moves the key marker: the strip's neighbours stay as they are. The exact row
    // relights them once more: their titles give numbers, which the half-precision slice only approximates.
    const key = `${msg}|${state?.colorScale}|${exact}`;
    if (key !== litKey) {
      unlight();
      litKey = key;
      lightStrip(i, nbs);
    }
    markKey(j);
    if (exact) renderReadout(i, j, nbs, rows);
  };
  if (isAggregated()) {
    // The host's row request is per head: an aggregated map answers hover from the matrix on screen.
    if (current && current.n > i) show({ [term]: current.values.subarray(i * current.n, (i + 1) * current.n) }, true);
    return;
  }
  const cached = rowCache.get(`${layer}/${head}/${i}`);
  if (cached) return show(cached, true);
  // The strip can light up at once from the slice on screen; the exact readout follows the host's row.
  if (current && current.key === `${layer}/${head}/${term}`) show({ [term]: current.values.subarray(i * current.n, (i + 1) * current.n) }, false);
  void getRow(layer, head, i).then((rows) => show(rows, true)).catch(reportError);
}

let litKey = '';
let keyEl: HTMLElement | null = null;
const rowCache = new LruCache<string, Partial<Record<MatrixKind, Float32Array>>>(256);

function unlight(): void {
  for (const t of lit) {
    t.classList.remove('query', 'key', 'neighbour', 'negative', 'pinned');
    t.style.backgroundColor = '';
    t.style.color = '';
    t.removeAttribute('data-rank');
    t.title = stripTitle(Number(t.dataset.i));
    t.setAttribute('aria-selected', 'false');
  }
  lit = [];
  litKey = '';
  markKey(null);
}

function markKey(j: number | null): void {
  const next = j === null ? null : tokEl(j);
  if (next === keyEl) return;
  keyEl?.classList.remove('key');
  next?.classList.add('key');
  keyEl = next;
}

function tokEl(k: number): HTMLElement | null {
  return document.querySelector<HTMLElement>(`#tokens .tok[data-i="${k}"]`);
}

function lightStrip(i: number, nbs: SignedNeighbours): void {
  if (!state) return;
  const signed = isSignedKind(state.term);
  const lut = makeLut(state.colorScale, signed, themeKind());
  const paint = (nb: Neighbour, rank: number, sign: -1 | 0 | 1) => {
    const t = tokEl(nb.j);
    if (!t) return;
    t.classList.add(sign < 0 ? 'negative' : 'neighbour');
    const c = chipColours(nb.strength, sign, lut);
    t.style.backgroundColor = c.background;
    t.style.color = c.color;
    // Rank badges on the strongest few (a number beside a word would overprint its neighbour's).
    if (rank < LABELLED && sign >= 0) t.dataset.rank = String(rank + 1);
    t.title = `#${nb.j} ${labelOf(nb.j)}: ${state?.term} = ${formatSigned(nb.value)}${sign < 0 ? ' (lowers the score)' : ''}`;
    lit.push(t);
  };
  nbs.top.forEach((nb, rank) => paint(nb, rank, signed ? 1 : 0));
  nbs.negative.slice(0, TOP_NEGATIVE).forEach((nb, rank) => paint(nb, rank, -1));
  const q = tokEl(i);
  if (q) {
    q.classList.add('query');
    if (state.pinned === i) q.classList.add('pinned');
    q.setAttribute('aria-selected', 'true');
    lit.push(q);
  }
  if (!hoverFromStrip) {
    // The pointer is on the heatmap or in the editor: bring the strongest neighbour, then the query, into view.
    const first = nbs.top[0] ? tokEl(nbs.top[0].j) : null;
    const strip = $('#tokens');
    revealWithin(strip, first);
    revealWithin(strip, q);
  }
}

function tokenName(k: number): string {
  const t = labelOf(k);
  return t ? `“${t}” ${merged ? 'word ' : ''}#${k}` : `#${k}`;
}

function renderReadoutIdle(): void {
  $('#readout').replaceChildren(...idleReadout());
}

function renderReadout(i: number, j: number | null, nbs: SignedNeighbours, rows: Partial<Record<MatrixKind, Float32Array>>): void {
  if (!state || !init) return;
  const n = init.tokens.length;
  const compare = comparePanes.length && j !== null && state.view === 'heads' ? comparePanes.map((p) => ({ head: p.head, value: p.values[i * n + j] })) : undefined;
  $('#readout').replaceChildren(
    ...readoutLines({
      where: `Layer ${state.layer}, ${state.headAgg ? `${state.headAgg} of heads` : `head ${state.head}`}${state.pinned === i ? ' (pinned)' : ''}`,
      term: state.term,
      kinds,
      i,
      j,
      nbs,
      rows,
      name: tokenName,
      // Table rows index pieces: merged words have no single distance.
      buckets: !merged && buckets && buckets.n === n ? buckets : undefined,
      compare,
      negatives: TOP_NEGATIVE,
    }),
  );
}

/** Theme colours for the overlays, read once per render (getComputedStyle on every mouse move is costly). */
let overlayColors = { focus: '#007fd4', fg: '#ffffff' };
function readThemeColors(): void {
  const style = getComputedStyle(document.body);
  overlayColors = {
    focus: style.getPropertyValue('--vscode-focusBorder').trim() || '#007fd4',
    fg: style.getPropertyValue('--vscode-editor-foreground').trim() || '#ffffff',
  };
}

function drawOverlay(overlay: HTMLCanvasElement, n: number, i: number | null, j: number | null): void {
  const ctx = overlay.getContext('2d');
  if (!ctx) return;
  ctx.clearRect(0, 0, overlay.width, overlay.height);
  if (i === null || n === 0) return;
  const cell = overlay.width / n;
  const { focus, fg } = overlayColors;
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

// ---------- messages ----------
window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const m = event.data;
  switch (m.type) {
    case 'init':
      start(m.init);
      return;
    case 'empty':
      init = undefined;
      app.dataset.state = 'empty';
      app.replaceChildren(el('p', { id: 'empty', class: 'empty' }, [m.message]));
      return;
    case 'response':
      if (!init || m.resultId !== init.resultId) return;
      if (m.ok) tracker.settle(m.id, true, m.body);
      else tracker.settle(m.id, false, undefined, m.error);
      return;
    case 'focus':
      if (!init || m.resultId !== init.resultId || !state) return;
      if (state.pinned === null) {
        hoverFromStrip = false;
        hoverI = m.i !== null && merged ? merged.findIndex((g) => g.pieces.includes(m.i!)) : m.i;
        if (hoverI === -1) hoverI = null;
        hoverJ = null;
        refreshHover();
        if (hoverI !== null) revealWithin($('#tokens'), tokEl(hoverI));
      }
      return;
    case 'show':
      update({ view: m.view });
      return;
    case 'exportImage':
      exportView(m.format, m.requestId);
      return;
    case 'fillMask':
    case 'tokenPrediction':
      predictions.receive(m);
      return;
    case 'runProgress':
    case 'runResult':
      receiveRun(m);
      return;
  }
});

function start(next: ViewInit): void {
  // Marks the UI bench reads (init → shell → first paint); the heatmap marks each paint.
  performance.mark('lens-init');
  const sameResult = init?.resultId === next.resultId;
  tracker.rejectAll('superseded');
  inflight.clear();
  cache.clear();
  rowCache.clear();
  lit = [];
  litKey = '';
  keyEl = null;
  merged = undefined;
  init = next;
  buckets = null;
  kinds = kindsOf((k) => k === 'c2c' || k === 'scores' || k === 'probs' || next.model.terms.includes(k));
  const saved = (state ?? vscode.getState()) as Partial<PersistedState> | undefined;
  state = reconcileState(saved, next.defaults, kinds, next.model.layers, next.model.heads, next.tokens.length);
  // A pin belongs to one text: keep it across hide/show of the same result, drop it for a new Explain.
  if (!sameResult && saved?.resultId !== next.resultId) state.pinned = null;
  state.resultId = next.resultId;
  // The host sent the matrix the view showed last along with the result: the first paint needs no request.
  if (next.first) cache.set(keyOf(paintRequest(next.first.layer, next.first.head, next.first.kind)), next.first);
  hoverI = state.pinned;
  hoverJ = null;
  sentHover = '';
  current = undefined;
  buildShell();
  showRunBanner(next, post);
  syncControls();
  performance.mark('lens-shell');
  save();
  // The distance table only serves the readout: fetch it once the first picture is up, not before.
  void renderView()
    .then(() => bucketRows())
    .then((b) => {
      if (init === next) buckets = b;
    })
    .catch(() => undefined); // without the table the readout gives δ alone
}

post({ type: 'ready', version: PROTOCOL_VERSION });
