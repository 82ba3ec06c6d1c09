import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_THUMB,
  MIN_THUMB,
  gridGeometry,
  nextToFetch,
  thumbAt,
  thumbCells,
  thumbOrigin,
  visibleLayers,
} from '../../webview/lens/views/model-view-model';

test('grid geometry fits the heads across the width, thumbnails within bounds', () => {
  const g = gridGeometry(12, 12, 900);
  assert.ok(g.width <= 900, `${g.width}`);
  assert.ok(g.thumb >= MIN_THUMB && g.thumb <= MAX_THUMB);
  assert.equal(g.height, g.labelH + 12 * (g.thumb + g.gap));
  // Few heads: capped at the largest size; many heads in a narrow panel: the smallest (scrolls across).
  assert.equal(gridGeometry(4, 2, 2000).thumb, MAX_THUMB);
  assert.equal(gridGeometry(24, 64, 400).thumb, MIN_THUMB);
});

test('thumbnail under the pointer: origins hit, gaps and labels miss', () => {
  const g = gridGeometry(4, 8, 700);
  for (const [li, h] of [
    [0, 0],
    [3, 7],
    [2, 5],
  ] as const) {
    const { x, y } = thumbOrigin(g, li, h);
    assert.deepEqual(thumbAt(g, x + 1, y + 1), { li, h });
    assert.deepEqual(thumbAt(g, x + g.thumb - 1, y + g.thumb - 1), { li, h });
    assert.equal(thumbAt(g, x + g.thumb + g.gap / 2, y + 1), undefined, 'gap');
  }
  assert.equal(thumbAt(g, 2, 40), undefined, 'layer labels');
  assert.equal(thumbAt(g, g.labelW + 2, 2), undefined, 'head labels');
  assert.equal(thumbAt(g, g.width + 5, g.labelH + 2), undefined, 'right of the grid');
  assert.equal(thumbAt(g, g.labelW + 2, g.height + 5), undefined, 'below the grid');
});

test('visible layer rows follow the scroll; fetch order: on screen, nearest the current layer first', () => {
  const g = gridGeometry(24, 16, 900);
  const step = g.thumb + g.gap;
  assert.equal(visibleLayers(g, 0, g.labelH + 2 * step, 0).first, 0);
  assert.equal(visibleLayers(g, 0, g.labelH + 2 * step, 0).last, 2);
  const w = visibleLayers(g, 10 * step, 3 * step, 0);
  assert.ok(w.first <= 10 && w.last >= 12 && w.last - w.first <= 4, `${w.first}..${w.last}`);
  assert.equal(visibleLayers(g, 100 * step, 3 * step).first, 24);
  const loaded = new Set([10]);
  assert.equal(
    nextToFetch({ first: 9, last: 13 }, (li) => loaded.has(li), 10),
    9,
  );
  assert.equal(
    nextToFetch({ first: 9, last: 13 }, (li) => loaded.has(li), 12),
    12,
  );
  assert.equal(
    nextToFetch({ first: 9, last: 11 }, () => true, 0),
    undefined,
    'all on screen loaded: nothing off screen is fetched',
  );
});

test('thumbnail cells: device pixels, at most the tokens and 64', () => {
  assert.equal(thumbCells(40, 1, 500), 40);
  assert.equal(thumbCells(40, 2, 500), 64);
  assert.equal(thumbCells(40, 2, 30), 30);
  assert.equal(thumbCells(40, 0, 500), 40);
});
