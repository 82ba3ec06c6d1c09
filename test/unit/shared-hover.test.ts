import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cellAt, neighbours, pairValues, sharedBucket, strengthBucket, topK } from '../../src/shared/hover';
import { at } from './helpers';

test('topK by value returns the k largest, strongest first, with relative strength', () => {
  const row = new Float32Array([0.1, 0.5, 0.05, 0.3, 0.05]);
  const top = topK(row, 3, false);
  assert.deepEqual(
    top.map((t) => t.j),
    [1, 3, 0],
  );
  assert.equal(at(top, 0).strength, 1);
  assert.ok(Math.abs(at(top, 1).strength - 0.6) < 1e-6);
});

test('topK by magnitude ranks strong negative raw terms too', () => {
  const row = new Float32Array([1, -7, 3, -2]);
  assert.deepEqual(
    topK(row, 2, true).map((t) => t.j),
    [1, 2],
  );
  assert.deepEqual(
    topK(row, 2, false).map((t) => t.j),
    [2, 0],
  );
});

test('neighbours of a raw term: top = what raises the score (positive only), negatives apart', () => {
  const row = new Float32Array([1, -7, 3, -2, 0]);
  const c2p = neighbours(row, 'c2p', 3);
  assert.deepEqual(
    c2p.top.map((t) => t.j),
    [2, 0],
    'the −7 is not the strongest neighbour',
  );
  assert.ok(c2p.top.every((t) => t.value > 0));
  assert.deepEqual(
    c2p.negative.map((t) => [t.j, t.value]),
    [
      [1, -7],
      [3, -2],
    ],
  );
  assert.equal(at(c2p.negative, 0).strength, 1);
  const probs = neighbours(new Float32Array([0.1, 0.6, 0.3]), 'probs', 2);
  assert.deepEqual(
    probs.top.map((t) => t.j),
    [1, 2],
  );
  assert.deepEqual(probs.negative, []);
});

test("sharedBucket lists the keys whose relative-position row equals the hovered key's", () => {
  // n = 4, row 1 of the table-row map: keys 0 and 1 share row 5, keys 2 and 3 have their own.
  const rowOf = new Float32Array([0, 1, 2, 3, 5, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(sharedBucket(rowOf, 4, 1, 0), [0, 1]);
  assert.deepEqual(sharedBucket(rowOf, 4, 1, 3), [3]);
});

test('topK skips excluded and non-finite entries; ties keep the lower index', () => {
  const row = new Float32Array([5, NaN, 5, Infinity, 1]);
  assert.deepEqual(
    topK(row, 2, false).map((t) => t.j),
    [0, 2],
  );
  assert.deepEqual(
    topK(row, 2, false, (j) => j === 0).map((t) => t.j),
    [2, 4],
  );
  assert.deepEqual(topK(new Float32Array([]), 3, false), []);
});

test('topK agrees with a full sort on a 512-long row', () => {
  const row = Float32Array.from({ length: 512 }, (_, k) => (Math.sin(k * 12.9898) * 43758.5453) % 1);
  const expected = [...row.keys()].sort((a, b) => at(row, b) - at(row, a) || a - b).slice(0, 8);
  assert.deepEqual(
    topK(row, 8, false).map((t) => t.j),
    expected,
  );
});

test('strength buckets: 0 is hidden, the strongest is the top bucket', () => {
  assert.equal(strengthBucket(0, 4), 0);
  assert.equal(strengthBucket(0.01, 4), 1);
  assert.equal(strengthBucket(0.5, 4), 2);
  assert.equal(strengthBucket(1, 4), 4);
  assert.equal(strengthBucket(NaN, 4), 0);
});

test('pairValues reads the same key from every kind the model has', () => {
  const rows = { c2c: new Float32Array([1, 2]), probs: new Float32Array([0.3, 0.7]) };
  assert.deepEqual(pairValues(rows, 1), { c2c: 2, probs: Number(new Float32Array([0.7])[0]) });
  assert.deepEqual(pairValues(rows, 5), {});
});

test('cellAt maps pointer positions to (query row, key column)', () => {
  assert.deepEqual(cellAt(0, 0, 512, 4), { i: 0, j: 0 });
  assert.deepEqual(cellAt(511.9, 130, 512, 4), { i: 1, j: 3 });
  assert.equal(cellAt(512, 0, 512, 4), null);
  assert.equal(cellAt(-1, 0, 512, 4), null);
  assert.deepEqual(cellAt(299.9, 299.9, 300, 512), { i: 511, j: 511 }, 'cells smaller than a pixel still map in range');
});
