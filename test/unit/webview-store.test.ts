// The main panel's store (webview/state): what each action sets, and which subscribers hear of it how often.
// The store is nanostores (an ES module), loaded with import() so that a Node without require(esm) skips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROTOCOL_VERSION, type ViewInit } from '../../src/shared/protocol/lens';
import type { ViewState } from '../../webview/lens/state/nav';

const skip = (process.features as { require_module?: boolean }).require_module
  ? false
  : 'this Node cannot load the store (an ES module) from CommonJS tests';

const state: ViewState = {
  version: PROTOCOL_VERSION,
  view: 'heatmap',
  term: 'probs',
  layer: 0,
  head: 0,
  pinned: null,
  compare: [],
  colorScale: 'diverging',
};
const init = {
  resultId: 1,
  text: 'the cat',
  tokens: [
    { i: 0, text: '[CLS]', start: 0, end: 0, special: true },
    { i: 1, text: '▁the', start: 0, end: 3, special: false },
    { i: 2, text: '▁ca', start: 4, end: 6, special: false },
    { i: 3, text: 't', start: 6, end: 7, special: false },
    { i: 4, text: '[SEP]', start: 7, end: 7, special: true },
  ],
  model: {
    name: 'm',
    type: 'deberta-v2',
    layers: [0, 1, 2],
    heads: 4,
    headDim: 8,
    terms: ['c2c', 'c2p'],
    executionProvider: 'cpu',
    scale: 1,
  },
  defaults: { term: 'probs', view: 'heatmap', colorScale: 'diverging' },
  ms: 1,
} satisfies ViewInit;

/** The store, reset to one result and state, with counters of what each subscriber heard. */
async function fresh(s: Partial<ViewState> = {}) {
  const store = await import('../../webview/lens/state/store');
  const actions = await import('../../webview/lens/state/actions');
  const selectors = await import('../../webview/lens/state/selectors');
  store.$init.set(init);
  store.$merged.set(undefined);
  store.$viewState.set({ ...state, ...s });
  store.$hover.set({ i: null, j: null, fromStrip: false });
  const heard = { renders: 0, hovers: [] as { i: number | null; j: number | null }[], states: 0 };
  const off = [
    store.$renderEpoch.listen(() => heard.renders++),
    store.$hover.listen((h) => heard.hovers.push({ i: h.i, j: h.j })),
    store.$viewState.listen(() => heard.states++),
  ];
  return { store, actions, selectors, heard, done: () => off.forEach((f) => f()) };
}

test('a new layer, head, term or view asks for one render and leaves the hover alone', { skip }, async () => {
  const { actions, store, heard, done } = await fresh();
  actions.update({ layer: 2 });
  actions.update({ term: 'c2c', head: 3 });
  assert.equal(heard.renders, 2);
  assert.equal(heard.hovers.length, 0, 'the hover is shown again after the new picture is painted, not before');
  assert.equal(heard.states, 2, 'the toolbar and the saved state hear of each change once');
  assert.deepEqual([store.$viewState.get()?.layer, store.$viewState.get()?.head, store.$viewState.get()?.term], [2, 3, 'c2c']);
  actions.update({ view: 'heatmap' });
  assert.equal(heard.renders, 3, 'asking for the view on screen draws it again');
  done();
});

test('a change the picture does not show (the pin) shows the hover again instead of a render', { skip }, async () => {
  const { actions, heard, done } = await fresh();
  actions.update({ pinned: 2 });
  assert.equal(heard.renders, 0);
  assert.equal(heard.hovers.length, 1);
  done();
});

test('pin sets the pin and the hover in one notification; the pointer then only moves the key', { skip }, async () => {
  const { actions, store, heard, done } = await fresh();
  actions.pin(3, 1);
  assert.deepEqual(heard.hovers, [{ i: 3, j: 1 }]);
  assert.equal(heard.states, 1);
  assert.equal(store.$viewState.get()?.pinned, 3);
  actions.setHover(1, 4);
  assert.deepEqual(heard.hovers.at(-1), { i: 3, j: 4 }, 'the pinned row stays the query');
  actions.togglePin(3);
  assert.equal(store.$viewState.get()?.pinned, null, 'toggling the pinned row unpins it');
  done();
});

test('the strip flag follows the pointer and is kept by moves that do not say where they come from', { skip }, async () => {
  const { actions, store, done } = await fresh();
  actions.setHover(2, null, true);
  assert.equal(store.$hover.get().fromStrip, true);
  actions.setHover(null, null);
  assert.equal(store.$hover.get().fromStrip, true);
  actions.setHover(1, 1, false);
  assert.equal(store.$hover.get().fromStrip, false);
  done();
});

test('Escape clears the pin and the hover with one hover notification (and redraws, as every key step does)', { skip }, async () => {
  const { actions, store, heard, done } = await fresh({ pinned: 2 });
  actions.setHover(2, 3);
  heard.hovers.length = 0;
  actions.act({ type: 'clear' });
  assert.deepEqual(heard.hovers, [{ i: null, j: null }]);
  assert.equal(heard.renders, 1);
  assert.equal(store.$viewState.get()?.pinned, null);
  done();
});

test('layer and head steps wrap within the model; compare ticks toggle', { skip }, async () => {
  const { actions, store, heard, done } = await fresh();
  actions.act({ type: 'layer', delta: -1 });
  actions.act({ type: 'head', delta: 5 });
  assert.deepEqual([store.$viewState.get()?.layer, store.$viewState.get()?.head], [2, 1]);
  assert.equal(heard.renders, 2);
  actions.toggleCompareHead(2);
  actions.toggleCompareHead(0);
  actions.toggleCompareHead(2);
  assert.deepEqual(store.$viewState.get()?.compare, [0]);
  assert.equal(heard.renders, 2, 'ticking a head redraws only the side-by-side panes (their own render)');
  done();
});

test('selectors: the model’s kinds, row labels of pieces or merged words, and when hover reads the map on screen', { skip }, async () => {
  const { store, selectors, actions, done } = await fresh();
  assert.deepEqual(selectors.$kinds.get(), ['c2c', 'c2p', 'scores', 'probs'], 'a model without p2c offers no p2c');
  store.$init.set({ ...init, model: { ...init.model, type: 'bert', terms: [] } });
  assert.deepEqual(selectors.$kinds.get(), ['scores', 'probs'], 'BERT: its raw q·k is the score, not a c2c term');
  store.$init.set(init);
  assert.deepEqual([selectors.labelOf(0), selectors.labelOf(2), selectors.labelOf(9)], ['[CLS]', 'ca', '']);
  assert.equal(selectors.$rowCount.get(), 5);
  assert.equal(selectors.$aggregated.get(), false);
  store.$merged.set([
    { text: '[CLS]', pieces: [0], start: 0, end: 0, special: true },
    { text: 'the', pieces: [1], start: 0, end: 3, special: false },
    { text: 'cat', pieces: [2, 3], start: 4, end: 7, special: false },
    { text: '[SEP]', pieces: [4], start: 7, end: 7, special: true },
  ]);
  assert.equal(selectors.$rowCount.get(), 4);
  assert.equal(selectors.tokenName(2), '“cat” word #2');
  assert.equal(selectors.stripTitle(2), 'word #2 cat (pieces ▁ca + t)');
  assert.equal(selectors.$aggregated.get(), true, 'merged words: hover reads the pooled map, not a head’s row');
  store.$merged.set(undefined);
  actions.update({ headAgg: 'mean' });
  assert.equal(selectors.$aggregated.get(), true);
  actions.update({ headAgg: null, term: 'probs', discountSpecial: true });
  assert.equal(selectors.$aggregated.get(), true);
  actions.update({ term: 'c2c' });
  assert.equal(selectors.$aggregated.get(), false, 'the special-token discount applies to probs only');
  done();
});
