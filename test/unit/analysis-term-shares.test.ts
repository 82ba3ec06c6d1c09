import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cellShares, headShares, labelHead, termShareGrid } from '../../src/analysis/term-shares';
import { isLensError } from '../../src/engine/errors';
import { at } from './helpers';
import { fixtureResult } from './analysis-fixture';

const close = (a: ArrayLike<number>, b: number[], eps = 1e-6) => {
  assert.equal(a.length, b.length);
  for (let k = 0; k < b.length; k++) {
    const [x, y] = [at(a, k), at(b, k)];
    assert.ok(Math.abs(x - y) <= eps, `[${k}] ${x} vs ${y}`);
  }
};

// One head, n = 2. Cell by cell: |3|,|1|,|0| → 3/4,1/4,0; |−1|,|1|,|2| → 1/4,1/4,1/2; all 0 → 1/3 each;
// 0,|2|,|−2| → 0,1/2,1/2.
const terms = {
  c2c: Float32Array.from([3, -1, 0, 0]),
  c2p: Float32Array.from([1, 1, 0, 2]),
  p2c: Float32Array.from([0, 2, 0, -2]),
};

test('cell shares use magnitudes and split an all-zero cell equally', async () => {
  const s = cellShares(terms);
  close(s.c2c, [0.75, 0.25, 1 / 3, 0]);
  close(s.c2p!, [0.25, 0.25, 1 / 3, 0.5]);
  close(s.p2c!, [0, 0.5, 1 / 3, 0.5]);
});

test('a model without positional terms is all content', async () => {
  const s = cellShares({ c2c: Float32Array.from([2, -5, 0, 1]) });
  close(s.c2c, [1, 1, 1, 1]);
  assert.equal(s.c2p, undefined);
});

test('head shares: uniform mean and probability-weighted mean', async () => {
  // uniform: (0.75 + 0.25 + 1/3 + 0) / 4 = 1/3
  close(headShares(terms, 2).c2c, [1 / 3]);
  // weights [1,0,0.5,0.5]: (0.75 + 0 + 1/6 + 0) / 2 = 0.458333…
  const w = headShares(terms, 2, 'probs', Float32Array.from([1, 0, 0.5, 0.5]));
  close(w.c2c, [0.75 / 2 + 1 / 12]);
  close(w.c2p!, [(0.25 + 1 / 6 + 0.25) / 2]);
});

test('probs weighting without probs is a LensError', async () => {
  assert.throws(() => headShares(terms, 2, 'probs'), isLensError);
  assert.throws(() => headShares({ c2c: new Float32Array(5) }, 2), isLensError);
});

test('labels follow the thresholds', async () => {
  assert.equal(labelHead(1 / 3), 'positional');
  assert.equal(labelHead(0.4583), 'mixed');
  assert.equal(labelHead(0.75), 'content');
  assert.equal(labelHead(0.5, { content: 0.5, positional: 0.2 }), 'content');
});

test('layer × head grid on the v3_tiny fixture', async () => {
  const r = fixtureResult('text0');
  const g = await termShareGrid(r);
  assert.deepEqual(g.layers, [0, 1]);
  assert.equal(g.content.length, 2 * r.heads);
  assert.equal(g.labels.length, 2 * r.heads);
  for (let k = 0; k < g.content.length; k++) {
    assert.ok(Math.abs(at(g.content, k) + at(g.c2p!, k) + at(g.p2c!, k) - 1) < 1e-5);
    assert.equal(g.labels[k], labelHead(at(g.content, k)));
  }
  // Layer 1, head 2 checked cell by cell against a direct computation from the result's values.
  let acc = 0;
  for (let i = 0; i < r.n; i++) {
    for (let j = 0; j < r.n; j++) {
      const a = Math.abs(r.value(1, 2, 'c2c', i, j));
      acc += a / (a + Math.abs(r.value(1, 2, 'c2p', i, j)) + Math.abs(r.value(1, 2, 'p2c', i, j)));
    }
  }
  assert.ok(Math.abs(at(g.content, r.heads + 2) - acc / (r.n * r.n)) < 1e-5);
  const pw = await termShareGrid(r, { weighting: 'probs' });
  assert.notDeepEqual(Array.from(pw.content), Array.from(g.content));
});

test("BERT's five-term split: p2p and rest enter the sum like the others", async () => {
  // One cell: |1|, |−1|, |2|, |0|, |−4| → 1/8, 1/8, 2/8, 0, 4/8.
  const s = cellShares({
    c2c: Float32Array.of(1),
    c2p: Float32Array.of(-1),
    p2c: Float32Array.of(2),
    p2p: Float32Array.of(0),
    rest: Float32Array.of(-4),
  });
  close(s.c2c, [1 / 8]);
  close(s.c2p!, [1 / 8]);
  close(s.p2c!, [2 / 8]);
  close(s.p2p!, [0]);
  close(s.rest!, [4 / 8]);
  const h = headShares({ c2c: Float32Array.of(1, 0, 0, 0), rest: Float32Array.of(1, 1, 0, 0) }, 2);
  // c2c's cell shares: 1/2, 0, then 1/2 twice (all-zero cells split equally between the two terms) → 3/8; rest 5/8.
  close(h.c2c, [3 / 8]);
  close(h.rest!, [5 / 8]);
  assert.equal(h.c2p, undefined);
});
