// The Compare Models panel's store (webview/compare/state): the pickers a pair starts with, how a side's pickers
// move, what the linked hover lights up on both sides, and the readouts. The store is nanostores (an ES module),
// loaded with import() so that a Node without require(esm) skips.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompareInit, CompareSide } from '../../src/shared/protocol/compare';
import type { ProtocolToken } from '../../src/shared/protocol/lens';
import { alignTokens } from '../../src/shared/token-alignment';

const skip = (process.features as { require_module?: boolean }).require_module
  ? false
  : 'this Node cannot load the store (an ES module) from CommonJS tests';

const tok = (i: number, text: string, start: number, end: number, special = false): ProtocolToken => ({ i, text, start, end, special });
const text = 'ab c';
const A = [tok(0, '[CLS]', 0, 0, true), tok(1, '▁ab', 0, 2), tok(2, '▁c', 2, 4)];
const B = [tok(0, '[CLS]', 0, 0, true), tok(1, 'a', 0, 1), tok(2, '##b', 1, 2), tok(3, 'c', 3, 4)];
const sideInfo = (over: Partial<CompareSide>): CompareSide => ({
  name: 'm',
  path: '/m',
  type: 'deberta-v2',
  architecture: 'deberta',
  layers: [0, 1, 2],
  heads: 4,
  terms: ['c2c', 'c2p', 'p2c'],
  decomposition: false,
  tokens: A,
  ms: 1,
  ...over,
});
const pair = (pairId = 7): CompareInit => ({
  pairId,
  text,
  a: sideInfo({}),
  b: sideInfo({ name: 'bert', type: 'bert', architecture: 'bert', layers: [0, 1], heads: 2, terms: [], decomposition: true, tokens: B }),
  alignment: alignTokens(text, A, B),
  sameTokens: false,
  colorScale: 'diverging',
});
const VP = { width: 1200, height: 800 };
// A: 3 × 3, B: 4 × 4, row-major; rows are queries.
const MA = Float32Array.from([0.5, 0.3, 0.2, 0.1, 0.6, 0.3, 0.2, 0.2, 0.6]);
const MB = Float32Array.from([0.4, 0.2, 0.2, 0.2, 0.1, 0.2, 0.3, 0.4, 0.1, 0.1, 0.5, 0.3, 0.25, 0.25, 0.25, 0.25]);

async function load() {
  const store = await import('../../webview/compare/state/store');
  const actions = await import('../../webview/compare/state/actions');
  const selectors = await import('../../webview/compare/state/selectors');
  return { store, actions, selectors };
}

test(
  'a pair starts at the first layer, head 0, probs; the pickers saved for that pair come back where the side has them',
  { skip },
  async () => {
    const { store, actions } = await load();
    actions.openPair(pair(), undefined, VP);
    assert.deepEqual(store.$picks.get(), { a: { layer: 0, head: 0, kind: 'probs' }, b: { layer: 0, head: 0, kind: 'probs' } });
    assert.equal(store.$view.get(), 'sides');
    actions.openPair(pair(), { pairId: 7, view: 'diff', a: { layer: 2, head: 9, kind: 'c2p' }, b: { layer: 1, head: 1, kind: 'p2p' } }, VP);
    // Head 9 does not exist on A; BERT's p2p exists in layer 0 only.
    assert.deepEqual(store.$picks.get(), { a: { layer: 2, head: 0, kind: 'c2p' }, b: { layer: 1, head: 1, kind: 'probs' } });
    assert.equal(store.$view.get(), 'diff');
    actions.openPair(
      pair(8),
      { pairId: 7, view: 'diff', a: { layer: 2, head: 1, kind: 'c2p' }, b: { layer: 1, head: 1, kind: 'scores' } },
      VP,
    );
    assert.deepEqual(store.$picks.get()?.a, { layer: 0, head: 0, kind: 'probs' }, 'another pair’s choices are not applied');
    assert.equal(store.$view.get(), 'sides');
  },
);

test('a side’s pickers: a new layer keeps the term only where it offers it; the other side is left alone', { skip }, async () => {
  const { store, actions } = await load();
  actions.openPair(pair(), undefined, VP);
  const a = store.$picks.get()?.a;
  actions.pick('b', { kind: 'p2p' });
  assert.equal(store.$picks.get()?.b.kind, 'p2p');
  actions.pick('b', { layer: 1 });
  assert.deepEqual(store.$picks.get()?.b, { layer: 1, head: 0, kind: 'probs' });
  actions.pick('b', { kind: 'scores' });
  actions.pick('b', { layer: 0 });
  assert.deepEqual(store.$picks.get()?.b, { layer: 0, head: 0, kind: 'scores' });
  assert.equal(store.$picks.get()?.a, a, 'side A’s pickers are the same object: it asks for nothing new');
});

test('linked hover: a token of A lights up its span on B, and each side’s strongest keys', { skip }, async () => {
  const { store, actions, selectors } = await load();
  actions.openPair(pair(), undefined, VP);
  actions.received('a', { values: MA, n: 3, kind: 'probs', layer: 0, head: 0 });
  actions.received('b', { values: MB, n: 4, kind: 'probs', layer: 0, head: 0 });
  actions.hoverToken('a', 1, null);
  const f = selectors.$focus.get();
  assert.deepEqual(f.sides.a.query, [1]);
  assert.deepEqual(f.sides.b.query, [1, 2], '“ab” is a and ##b on B');
  assert.equal(f.sides.a.row, 1);
  assert.equal(f.sides.b.row, 1, 'the span’s first token on the other side');
  assert.equal(f.group, 1);
  // A row 1: 0.6 (key 1) > 0.3 (key 2) > 0.1 (key 0). B rows 1–2 averaged: 0.1, 0.15, 0.4, 0.35.
  assert.deepEqual(
    f.sides.a.keys.map((k) => k.j),
    [1, 2, 0],
  );
  assert.deepEqual(
    f.sides.b.keys.map((k) => k.j),
    [2, 3, 1, 0],
  );
  assert.deepEqual(f.keyGroups.a, [1, 2, 0]);
  assert.deepEqual(f.keyGroups.b, [1, 2, 1, 0]);
  // A pin holds the hover while the pointer moves on; Escape (unpin) lets it go.
  actions.togglePin();
  actions.hoverGroup(2);
  assert.equal(selectors.$focus.get().group, 1);
  actions.unpin();
  assert.equal(selectors.$focus.get().group, 2);
  assert.deepEqual(selectors.$focus.get().sides.b.query, [3]);
  actions.hoverToken('a', null, null);
  assert.deepEqual(selectors.$focus.get().sides.a, { query: [], keys: [], row: null });
  assert.equal(store.$cell.get(), null);
});

test('readouts: the hovered cell on its side, the mean over the same characters on the other', { skip }, async () => {
  const { actions, selectors } = await load();
  actions.openPair(pair(), undefined, VP);
  actions.received('a', { values: MA, n: 3, kind: 'probs', layer: 0, head: 0 });
  assert.deepEqual(selectors.$readouts.get(), { a: null, b: null });
  actions.hoverToken('a', 1, 2);
  // B has no matrix yet: its line stays the hint.
  assert.match(selectors.$readouts.get().a ?? '', /^▁ab → ▁c: probs 0\.3/);
  assert.equal(selectors.$readouts.get().b, null);
  actions.received('b', { values: MB, n: 4, kind: 'probs', layer: 0, head: 0 });
  // "ab" → "c" on B: rows 1 and 2, column 3: (0.4 + 0.3) / 2.
  assert.match(selectors.$readouts.get().b ?? '', /^"ab" → "c": probs 0\.35\d*, mean of 2×1 tokens$/);
});

test('the difference is worked out only on its tab; its rows hover aligned spans when pooled', { skip }, async () => {
  const { store, actions, selectors } = await load();
  actions.openPair(pair(), undefined, VP);
  actions.received('a', { values: MA, n: 3, kind: 'probs', layer: 0, head: 0 });
  actions.received('b', { values: MB, n: 4, kind: 'probs', layer: 0, head: 0 });
  assert.equal(selectors.$difference.get(), undefined);
  actions.showView('diff');
  const d = selectors.$difference.get();
  assert.ok(d?.ok && d.pooled && d.n === 3);
  actions.hoverDifferenceRow(2);
  assert.deepEqual(store.$hover.get(), { group: 2 });
  actions.hoverDifferenceRow(null);
  assert.equal(store.$hover.get(), null);
});

test('a failed side shows its error until its next matrix arrives', { skip }, async () => {
  const { store, actions } = await load();
  actions.openPair(pair(), undefined, VP);
  actions.failed('b', 'the model crashed');
  assert.deepEqual(store.$errors.get(), { b: 'the model crashed' });
  actions.received('b', { values: MB, n: 4, kind: 'probs', layer: 0, head: 0 });
  assert.equal(store.$errors.get().b, '');
});
