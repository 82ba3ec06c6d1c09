// The opening view, decided once for the host's explain preview, the first slice and the webview's restored state.
// Every expected value below is worked out by hand from the rule: the last matrix whole or the defaults' matrix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isViewName, openingShape, openingView, type OpeningShape } from '../../src/shared/opening-view';
import { firstViewAt } from '../../src/extension/lens/first-slice';
import { PROTOCOL_VERSION } from '../../src/shared/protocol/lens';
import { reconcileState } from '../../webview/lens/state/nav';

const defaults = { term: 'c2p' as const, view: 'heatmap' as const };
// DeBERTa v3: c2c, c2p and p2c; two layers of four heads.
const v3 = { type: 'deberta-v2', layers: [0, 1], heads: 4, terms: ['c2p', 'p2c'] as const };
const V3: OpeningShape = openingShape(v3);

test('the shape lists the kinds the pickers offer', () => {
  assert.deepEqual(V3.kinds, ['c2c', 'c2p', 'p2c', 'scores', 'probs']);
  assert.deepEqual(openingShape({ type: 'deberta-v2', layers: [0], heads: 1, terms: ['c2p'] }).kinds, ['c2c', 'c2p', 'scores', 'probs']);
  assert.deepEqual(openingShape({ type: 'bert', layers: [0], heads: 1, terms: [] }).kinds, ['scores', 'probs']);
});

test('with nothing saved: the first layer, head 0, the default term and view', () => {
  assert.deepEqual(openingView(V3, defaults), { view: 'heatmap', layer: 0, head: 0, term: 'c2p' });
  assert.deepEqual(openingView(V3, { term: 'probs', view: 'heads' }, {}), { view: 'heads', layer: 0, head: 0, term: 'probs' });
  // A result of some layers only opens on the first it has.
  assert.deepEqual(openingView({ ...V3, layers: [3, 5] }, defaults), { view: 'heatmap', layer: 3, head: 0, term: 'c2p' });
  // No layer at all: layer 0 stands in (the view shows nothing to pick anyway).
  assert.equal(openingView({ ...V3, layers: [] }, defaults).layer, 0);
});

test('a last matrix the result has is kept whole, with the last view', () => {
  assert.deepEqual(openingView(V3, defaults, { view: 'ablation', layer: 1, head: 3, term: 'p2c' }), {
    view: 'ablation',
    layer: 1,
    head: 3,
    term: 'p2c',
  });
  // The host knows the matrix but not the view: the default view.
  assert.deepEqual(openingView(V3, defaults, { layer: 1, head: 3, term: 'probs' }), { view: 'heatmap', layer: 1, head: 3, term: 'probs' });
});

test('a last matrix the result lacks in any part gives the default matrix, not a mix', () => {
  const fallback = { view: 'heatmap', layer: 0, head: 0, term: 'c2p' };
  assert.deepEqual(openingView(V3, defaults, { layer: 2, head: 3, term: 'probs' }), fallback, 'layer 2 of two layers');
  assert.deepEqual(openingView(V3, defaults, { layer: 1, head: 4, term: 'probs' }), fallback, 'head 4 of four heads');
  assert.deepEqual(openingView(V3, defaults, { layer: 1, head: -1, term: 'probs' }), fallback, 'a negative head');
  assert.deepEqual(openingView(V3, defaults, { layer: 1, head: 1.5, term: 'probs' }), fallback, 'not a head index');
  assert.deepEqual(openingView(V3, defaults, { layer: 1, head: 3 }), fallback, 'no term saved');
  const c2pOnly = openingShape({ ...v3, terms: ['c2p'] });
  assert.deepEqual(openingView(c2pOnly, defaults, { layer: 1, head: 3, term: 'p2c' }), fallback, 'a term the model lacks');
});

test('BERT: raw terms are not offered, so a c2c matrix falls back and a c2p default becomes probs', () => {
  const bert = openingShape({ type: 'bert', layers: [0, 1], heads: 4, terms: [] });
  assert.deepEqual(openingView(bert, defaults, { layer: 1, head: 2, term: 'c2c' }), { view: 'heatmap', layer: 0, head: 0, term: 'probs' });
  assert.deepEqual(openingView(bert, { term: 'scores', view: 'heatmap' }), { view: 'heatmap', layer: 0, head: 0, term: 'scores' });
  assert.deepEqual(openingView(bert, defaults, { layer: 1, head: 2, term: 'scores' }), {
    view: 'heatmap',
    layer: 1,
    head: 2,
    term: 'scores',
  });
});

test('a saved view that is no view gives the default view', () => {
  assert.equal(openingView(V3, defaults, { view: 'bogus', layer: 1, head: 1, term: 'c2c' }).view, 'heatmap');
  assert.equal(openingView(V3, { ...defaults, view: 'heads' }, { view: undefined }).view, 'heads');
  assert.equal(isViewName('diff'), true);
  assert.equal(isViewName('heads'), true);
  assert.equal(isViewName('Heads'), false);
  assert.equal(isViewName(undefined), false);
});

test("the host's first matrix and the webview's restored state agree", () => {
  const full = { ...defaults, colorScale: 'diverging' as const };
  const lasts = [
    undefined,
    { layer: 1, head: 3, kind: 'p2c' as const },
    { layer: 1, head: 7, kind: 'probs' as const },
    { layer: 9, head: 0, kind: 'c2c' as const },
  ];
  for (const at of lasts) {
    const host = firstViewAt(v3, at, full);
    const saved = at && { version: PROTOCOL_VERSION, view: 'heatmap' as const, layer: at.layer, head: at.head, term: at.kind };
    const view = reconcileState(saved, full, V3.kinds, v3.layers, v3.heads, 10);
    assert.deepEqual(host, { layer: view.layer, head: view.head, kind: view.term }, JSON.stringify(at));
  }
  // Another view opens first: the host guesses no matrix.
  assert.equal(firstViewAt(v3, undefined, { ...full, view: 'heads' }), undefined);
  assert.equal(firstViewAt({ ...v3, layers: [] }, undefined, full), undefined);
});
