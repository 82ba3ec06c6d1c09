import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROTOCOL_VERSION } from '../../src/shared/protocol/lens';
import { applyAction, keyToAction, reconcileState, step, toggleCompare, type ViewState } from '../../webview/lens/state/nav';
import { LruCache } from '../../webview/common/cache';

const kinds = ['c2c', 'c2p', 'p2c', 'scores', 'probs'] as const;
const base: ViewState = {
  version: PROTOCOL_VERSION,
  view: 'heatmap',
  term: 'probs',
  layer: 0,
  head: 0,
  pinned: null,
  compare: [],
  colorScale: 'diverging',
};

test('[ ] step layers and , . step heads, wrapping around', () => {
  const layers = [0, 1, 2];
  let s = applyAction(base, keyToAction(']', kinds)!, layers, 4);
  assert.equal(s.layer, 1);
  s = applyAction({ ...s, layer: 0 }, keyToAction('[', kinds)!, layers, 4);
  assert.equal(s.layer, 2);
  s = applyAction(s, keyToAction(',', kinds)!, layers, 4);
  assert.equal(s.head, 3);
  s = applyAction(s, keyToAction('.', kinds)!, layers, 4);
  assert.equal(s.head, 0);
  assert.equal(step([3, 5], 5, 1), 3, 'steps through the layers a partial result has');
});

test('number keys pick terms that exist; Escape clears the pin; unknown keys do nothing', () => {
  assert.deepEqual(keyToAction('2', kinds), { type: 'term', term: 'c2p' });
  assert.equal(keyToAction('5', ['c2c', 'scores', 'probs']), undefined);
  assert.deepEqual(applyAction({ ...base, pinned: 3 }, keyToAction('Escape', kinds)!, [0], 1).pinned, null);
  assert.equal(keyToAction('x', kinds), undefined);
  assert.deepEqual(keyToAction('g', kinds), { type: 'view', view: 'heads' });
});

test('reconcileState keeps valid saved picks and repairs stale ones', () => {
  const defaults = { term: 'c2p' as const, view: 'heads' as const, colorScale: 'viridis' as const };
  const fresh = reconcileState(undefined, defaults, kinds, [0, 1], 2, 10);
  assert.deepEqual(fresh, { ...base, term: 'c2p', view: 'heads', colorScale: 'viridis' });
  const saved = { ...base, term: 'p2c' as const, layer: 7, head: 5, pinned: 20, compare: [0, 1, 9] };
  const r = reconcileState(saved, defaults, ['c2c', 'c2p', 'scores', 'probs'], [0, 1], 2, 10);
  assert.equal(r.term, 'c2p', 'a term the new model lacks falls back to the default');
  assert.equal(r.layer, 0);
  assert.equal(r.head, 0);
  assert.equal(r.pinned, null);
  assert.deepEqual(r.compare, [0, 1]);
  assert.equal(reconcileState({ ...saved, version: 999 }, defaults, kinds, [0], 1, 1).term, 'c2p', 'other versions are ignored');
});

test('toggleCompare adds, removes and keeps at most four heads', () => {
  assert.deepEqual(toggleCompare([], 2), [2]);
  assert.deepEqual(toggleCompare([2, 3], 2), [3]);
  assert.deepEqual(toggleCompare([0, 1, 2, 3], 4), [1, 2, 3, 4]);
});

test('LruCache evicts the least recently used entry', () => {
  const c = new LruCache<string, number>(2);
  c.set('a', 1);
  c.set('b', 2);
  assert.equal(c.get('a'), 1);
  c.set('c', 3);
  assert.equal(c.get('b'), undefined);
  assert.equal(c.get('a'), 1);
  assert.equal(c.size, 2);
});
