import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ablatedProbs, ablateLayer, ablateTerms, keptTerms } from '../../src/analysis/ablation';
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

// n = 2, scale 2. Real scores: row 0 = [2+0, 0]/2 = [1, 0]; row 1 = [0+2, 0]/2 = [1, 0].
const terms = { c2c: Float32Array.from([2, 0, 0, 0]), c2p: Float32Array.from([0, 0, 2, 0]) };
const e = Math.E;
const hi = e / (e + 1); // softmax([1, 0])[0] = 0.731058…
const real = Float32Array.from([hi, 1 - hi, hi, 1 - hi]);

test('content-only keeps c2c with the real scale', async () => {
  // row 0: [1, 0] → [hi, 1−hi]; row 1: [0, 0] → [1/2, 1/2]
  close(ablatedProbs(terms, 2, 2, 'content-only'), [hi, 1 - hi, 0.5, 0.5]);
  close(ablatedProbs(terms, 2, 2, ['c2p']), [0.5, 0.5, hi, 1 - hi]);
});

test('difference, KL(real‖ablated) and total variation per row', async () => {
  const a = ablateTerms(terms, real, 2, 2, 'content-only');
  close(a.diff, [0, 0, 0.5 - hi, hi - 0.5]);
  close(a.tv, [0, hi - 0.5]);
  const kl1 = hi * Math.log(hi / 0.5) + (1 - hi) * Math.log((1 - hi) / 0.5); // 0.11115…
  close(a.kl, [0, kl1]);
  assert.deepEqual(a.kept, ['c2c']);
});

test('masking: padded keys get 0, padding query rows are uniform', async () => {
  // mask token 1: row 0 only sees key 0; row 1 is a padding row.
  close(ablatedProbs(terms, 2, 2, 'all', { attentionMask: [1, 0] }), [1, 0, 0.5, 0.5]);
});

test('presets keep what the model has; explicit absent terms are errors', async () => {
  assert.deepEqual(keptTerms('no-p2c', ['c2c', 'c2p']), ['c2c', 'c2p']);
  assert.deepEqual(keptTerms('no-c2p', ['c2c', 'c2p']), ['c2c']);
  assert.throws(() => keptTerms(['p2c'], ['c2c', 'c2p']), isLensError);
  assert.throws(() => keptTerms('position-only', ['c2c']), isLensError);
  assert.throws(() => ablatedProbs(terms, 2, 0, 'all'), isLensError);
  assert.throws(() => ablatedProbs(terms, 3, 2, 'all'), isLensError);
});

test('fixture: keeping every term reproduces the stored probs; dropping one does not', async () => {
  const r = fixtureResult('text0');
  for (const layer of r.layers) {
    const all = await ablateLayer(r, layer, 'all');
    const real = r.tensor(layer, 'probs');
    for (let k = 0; k < real.length; k++) assert.ok(Math.abs(at(all.probs, k) - at(real, k)) < 2e-6, `layer ${layer} [${k}]`);
    assert.ok(Math.max(...all.kl) < 1e-6);
    assert.ok(Math.max(...all.tv) < 1e-5);
  }
  const noC2p = await ablateLayer(r, 1, 'no-c2p');
  assert.ok(Math.max(...noC2p.tv) > 0.01);
  for (let row = 0; row < r.heads * r.n; row++) {
    let s = 0;
    for (let j = 0; j < r.n; j++) s += at(noC2p.probs, row * r.n + j);
    assert.ok(Math.abs(s - 1) < 1e-5);
    assert.ok(at(noC2p.kl, row) >= 0 && at(noC2p.tv, row) <= 1);
  }
});
