// The Compare Models panel's page: two models on the same text. Each side has its own pickers and heatmap; the
// alignment strip shows how the tokenizers split the text; hovering a token, a heatmap row or an aligned span
// lights up the same characters and what they attend to on both sides; the Difference tab subtracts B from A.
import { COMPARE_PROTOCOL_VERSION, SIDES, type CompareInit, type CompareSliceRequest, type CompareToHost, type CompareToWebview, type Side } from '../src/shared/compare-protocol';
import { fromBuffer, RequestTracker } from '../src/shared/protocol';
import { topKeys } from '../src/shared/token-alignment';
import { formatValue } from '../src/shared/format';
import { describeRange, makeLut, robustRange } from './colors';
import { AlignmentStrip } from './compare-alignment';
import { difference } from './compare-difference';
import { CompareSideView } from './compare-side';
import { $, el, themeKind } from './dom';
import { Heatmap } from './heatmap';

/** What survives the panel being hidden (its page is torn down): the pickers and the tab, for that pair. */
interface SavedState {
  pairId: number;
  view: 'sides' | 'diff';
  a: CompareSliceRequest;
  b: CompareSliceRequest;
}
interface VsCodeApi {
  postMessage(message: CompareToHost): void;
  getState(): unknown;
  setState(state: SavedState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
/** Keys lit up per side on hover. */
const TOP = 5;
const AXIS = 84;

let init: CompareInit | undefined;
let sides: Record<Side, CompareSideView> | undefined;
let strip: AlignmentStrip | undefined;
let view: 'sides' | 'diff' = 'sides';
/** What the pointer is on: a token of one side, or an aligned span (group). */
type Hover = { side: Side; i: number } | { group: number };
let hovered: Hover | null = null;
/** The heatmap cell under the pointer (query i, key j of `side`), for the readouts. */
let cell: { side: Side; i: number; j: number } | null = null;
let pinned: Hover | null = null;
/** The difference on screen, for its hover (rows are tokens, or aligned spans when pooled). */
let diffShown: { pooled: boolean } | undefined;
const tracker = new RequestTracker<{ n: number; data: ArrayBuffer }>();
const app = $('#app');
const diffMap = new Heatmap({
  hover: (i) => hoverDiff(i),
  click: () => togglePin(),
});
for (const e of diffMap.root.querySelectorAll<HTMLElement>('[id]')) e.id = `${e.id}-diff`;

function post(m: CompareToHost): void {
  vscode.postMessage(m);
}

function log(message: string): void {
  post({ type: 'log', level: 'error', message });
}

// ---------- sizes ----------
/** Two heatmaps side by side while each keeps 260 px; else stacked, each as wide as the page allows. */
/** No taller than the page less the room for a side's title, pickers and legend above it. */
const tallest = () => Math.max(260, window.innerHeight - 220);
function sideSize(): number {
  const w = document.documentElement.clientWidth - 40;
  const two = Math.floor(w / 2) - AXIS - 24;
  app.dataset.layout = two >= 260 ? 'row' : 'stacked';
  if (two >= 260) return Math.min(560, two, tallest());
  return Math.max(160, Math.min(560, w - AXIS - 16, tallest()));
}
function diffSize(): number {
  return Math.max(160, Math.min(720, document.documentElement.clientWidth - 40 - AXIS - 16, tallest()));
}

function save(): void {
  if (init && sides) vscode.setState({ pairId: init.pairId, view, a: sides.a.request, b: sides.b.request });
}

function saved(pairId: number): SavedState | undefined {
  const s = vscode.getState() as SavedState | undefined;
  return s && typeof s === 'object' && s.pairId === pairId ? s : undefined;
}

// ---------- requests ----------
async function load(side: Side): Promise<void> {
  const s = sides?.[side];
  if (!init || !s) return;
  save();
  const req: CompareSliceRequest = s.request;
  const pairId = init.pairId;
  const { id, promise } = tracker.open();
  post({ type: 'request', id, pairId, side, body: req });
  try {
    const r = await promise;
    // A newer pair, or the pickers moved on while this was computed: the later answer paints.
    if (!init || init.pairId !== pairId || JSON.stringify(s.request) !== JSON.stringify(req)) return;
    s.show(req, r.n, fromBuffer(r.data, r.n * r.n), sideSize());
    applyHover();
    if (view === 'diff') paintDiff();
  } catch (e) {
    if (!init || init.pairId !== pairId) return; // a newer pair replaced this one
    const message = e instanceof Error ? e.message : String(e);
    s.fail(message);
    log(`side ${side}: ${message}`);
  }
}

// ---------- linked hover ----------
function onSideHover(side: Side, i: number | null, j: number | null): void {
  hovered = i === null ? null : { side, i };
  cell = i !== null && j !== null ? { side, i, j } : null;
  applyHover();
}

const tokenText = (side: Side, i: number) => init?.[side].tokens[i]?.text ?? String(i);

/** Each side's value for the hovered cell: the cell itself, and on the other side the mean over the aligned spans. */
function readouts(): void {
  if (!sides || !init) return;
  for (const side of SIDES) {
    const m = sides[side].matrix;
    if (!cell || !m) {
      sides[side].setReadout(null);
      continue;
    }
    if (side === cell.side) {
      sides[side].setReadout(`${tokenText(side, cell.i)} → ${tokenText(side, cell.j)}: ${m.kind} ${formatValue(m.values[cell.i * m.n + cell.j])}`);
      continue;
    }
    const al = init.alignment;
    const of = al.ok ? (cell.side === 'a' ? al.groupOfA : al.groupOfB) : [];
    const gi = al.ok ? al.groups[of[cell.i]] : undefined;
    const gj = al.ok ? al.groups[of[cell.j]] : undefined;
    const rows = gi?.[side] ?? [];
    const cols = gj?.[side] ?? [];
    if (!gi || !gj || !rows.length || !cols.length) {
      sides[side].setReadout('no tokens here cover the same characters');
      continue;
    }
    let sum = 0;
    for (const i of rows) for (const j of cols) sum += m.values[i * m.n + j];
    const many = rows.length * cols.length > 1 ? `, mean of ${rows.length}×${cols.length} tokens` : '';
    sides[side].setReadout(`${JSON.stringify(gi.text)} → ${JSON.stringify(gj.text)}: ${m.kind} ${formatValue(sum / (rows.length * cols.length))}${many}`);
  }
}

function hoverDiff(i: number | null): void {
  if (i === null || !diffShown || !init) hovered = null;
  else if (diffShown.pooled) hovered = { group: i };
  else hovered = { side: 'a', i };
  applyHover();
}

function togglePin(): void {
  pinned = pinned ? null : hovered;
  app.dataset.pinned = pinned ? 'true' : '';
  applyHover();
}

/** The tokens of each side the hover stands for: the aligned span's, else only the hovered token. */
function queryTokens(h: Hover | null, side: Side): number[] {
  if (!h || !init) return [];
  const al = init.alignment;
  if ('group' in h) return al.ok ? [...al.groups[h.group][side]] : [];
  if (al.ok) {
    const g = (h.side === 'a' ? al.groupOfA : al.groupOfB)[h.i];
    if (g >= 0) return [...al.groups[g][side]];
  }
  return h.side === side ? [h.i] : [];
}

function groupOf(h: Hover | null): number | null {
  if (!h || !init?.alignment.ok) return null;
  if ('group' in h) return h.group;
  const g = (h.side === 'a' ? init.alignment.groupOfA : init.alignment.groupOfB)[h.i];
  return g >= 0 ? g : null;
}

function applyHover(): void {
  if (!sides || !init) return;
  const h = pinned ?? hovered;
  const keyGroups: Record<Side, number[]> = { a: [], b: [] };
  for (const side of SIDES) {
    const s = sides[side];
    const q = queryTokens(h, side);
    const m = s.matrix;
    const keys = m && q.length ? topKeys(m.values, m.n, q, TOP) : [];
    s.highlight(q, keys, h && 'side' in h && h.side === side ? h.i : (q[0] ?? null));
    if (init.alignment.ok) {
      const of = side === 'a' ? init.alignment.groupOfA : init.alignment.groupOfB;
      keyGroups[side] = keys.map((k) => of[k.j]).filter((g) => g >= 0);
    }
  }
  const g = groupOf(h);
  strip?.highlight(g, keyGroups.a, keyGroups.b);
  readouts();
  if (diffShown) diffMap.setHover(diffShown.pooled ? g : queryTokens(h, 'a')[0] ?? null, null);
  app.dataset.hoverGroup = g === null ? '' : String(g);
}

// ---------- difference ----------
function paintDiff(): void {
  if (!init || !sides) return;
  const box = $('#diff-view');
  const note = $('#diff-note');
  const d = difference(sides.a.matrix, sides.b.matrix, { sameTokens: init.sameTokens, alignment: init.alignment, tokensA: init.a.tokens });
  if (!d.ok) {
    diffShown = undefined;
    note.textContent = d.message;
    box.dataset.state = 'none';
    diffMap.root.hidden = true;
    $('#diff-legend').hidden = true;
    return;
  }
  const range = robustRange(d.values, true);
  const lut = makeLut(init.colorScale, true, themeKind());
  diffMap.root.hidden = false;
  diffMap.readTheme();
  diffMap.set({ values: d.values, n: d.n, range, lut, labels: d.labels }, diffSize());
  diffShown = { pooled: d.pooled };
  note.textContent = d.caption;
  box.dataset.state = d.pooled ? 'pooled' : 'cells';
  const legend = $('#diff-legend');
  legend.hidden = false;
  const bar = $<HTMLCanvasElement>('#diff-legend-bar');
  const ctx = bar.getContext('2d');
  if (ctx) {
    const img = ctx.createImageData(256, 1);
    img.data.set(lut);
    ctx.putImageData(img, 0, 0);
  }
  $('#diff-legend-text').textContent = `${describeRange(range, 'A − B').replace('(blue lowers the score, red raises it)', '(red: A higher, blue: B higher)')}${d.pooled ? ' · each side: mean over the span’s tokens' : ''}`;
  applyHover();
}

function showView(v: 'sides' | 'diff'): void {
  view = v;
  app.dataset.view = v;
  save();
  for (const [id, on] of [
    ['tab-sides', v === 'sides'],
    ['tab-diff', v === 'diff'],
  ] as const) $(`#${id}`).setAttribute('aria-selected', String(on));
  $('#diff-view').hidden = v !== 'diff';
  if (v === 'diff') paintDiff();
}

// ---------- page ----------
function build(i: CompareInit): void {
  init = i;
  hovered = null;
  pinned = null;
  cell = null;
  diffShown = undefined;
  tracker.rejectAll('replaced');
  const events = { hover: onSideHover, click: () => togglePin(), changed: (side: Side) => void load(side) };
  sides = { a: new CompareSideView('a', i.a, i.colorScale, events), b: new CompareSideView('b', i.b, i.colorScale, events) };
  const names = { a: i.a.name, b: i.b.name };
  strip = i.alignment.ok
    ? new AlignmentStrip(i.alignment.groups, i.a.tokens, i.b.tokens, names, { hover: (g) => ((hovered = g === null ? null : { group: g }), applyHover()), click: () => togglePin() })
    : undefined;
  const tab = (id: string, label: string, v: 'sides' | 'diff') => {
    const b = el('button', { id, type: 'button', role: 'tab', 'aria-selected': 'false' }, [label]);
    b.addEventListener('click', () => showView(v));
    return b;
  };
  const tokensNote = i.sameTokens ? 'same tokens on both sides' : `${i.a.tokens.length} vs ${i.b.tokens.length} tokens`;
  app.replaceChildren(
    el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Compare controls' }, [
      el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'View' }, [tab('tab-sides', 'Side by side', 'sides'), tab('tab-diff', 'Difference (A − B)', 'diff')]),
      el('span', { class: 'meta', id: 'cmp-meta' }, [`${i.text.length} characters · ${tokensNote}`]),
    ]),
    strip ? strip.root : el('p', { id: 'alignment-problem', class: 'status', role: 'alert' }, [i.alignment.ok ? '' : `${i.alignment.reason} Linked hover works within each side only.`]),
    el('section', { id: 'diff-view', 'aria-label': 'Difference A − B', hidden: '' }, [
      el('p', { id: 'diff-note', class: 'meta' }),
      el('div', { id: 'diff-legend', class: 'legend cmp-legend', hidden: '' }, [
        el('canvas', { id: 'diff-legend-bar', class: 'legend-bar', width: '256', height: '1', 'aria-hidden': 'true' }),
        el('span', { id: 'diff-legend-text', class: 'meta' }),
      ]),
      diffMap.root,
    ]),
    el('div', { class: 'cmp-sides' }, [sides.a.root, sides.b.root]),
    el('p', { class: 'keys meta' }, ['Click pins the hovered tokens; click again or Escape releases them. Wheel or + − zoom a heatmap.']),
  );
  app.dataset.state = 'ready';
  const before = saved(i.pairId);
  if (before) {
    sides.a.pick(before.a);
    sides.b.pick(before.b);
  }
  showView(before?.view ?? 'sides');
  void load('a');
  void load('b');
}

window.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || !pinned) return;
  pinned = null;
  app.dataset.pinned = '';
  applyHover();
});

let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (!sides) return;
    for (const side of SIDES) {
      const m = sides[side].matrix;
      if (m) sides[side].show({ layer: m.layer, head: m.head, kind: m.kind }, m.n, m.values, sideSize());
    }
    if (view === 'diff') paintDiff();
    applyHover();
  }, 120);
});

window.addEventListener('message', (e: MessageEvent<CompareToWebview>) => {
  const m = e.data;
  switch (m?.type) {
    case 'init':
      build(m.init);
      return;
    case 'empty':
      app.replaceChildren(el('p', { class: 'empty' }, [m.message]));
      app.dataset.state = 'empty';
      return;
    case 'response':
      if (!init || m.pairId !== init.pairId) return;
      if (m.ok) tracker.settle(m.id, true, { n: m.n, data: m.data });
      else tracker.settle(m.id, false, undefined, m.error);
      return;
  }
});

post({ type: 'ready', version: COMPARE_PROTOCOL_VERSION });
