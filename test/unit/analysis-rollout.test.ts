import { test } from 'node:test';
import assert from 'node:assert/strict';
import { residualAttention, rollout, rolloutResult } from '../../src/analysis/rollout';
import { ExplainResult } from '../../src/engine/result/explain-result';
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

test('residual adjustment averages heads, adds I/2, row-normalises', async () => {
  // heads [[1,0],[1,0]] and [[0,1],[0,1]] → mean [[.5,.5],[.5,.5]] → 0.5·A + 0.5·I = [[.75,.25],[.25,.75]]
  close(residualAttention(Float32Array.from([1, 0, 1, 0, 0, 1, 0, 1]), 2), [0.75, 0.25, 0.25, 0.75]);
});

test('rollout multiplies later layers on the left', async () => {
  // Â1 = [[1,0],[.5,.5]], Â2 = [[.5,.5],[0,1]]; R = Â2·Â1 = [[.75,.25],[.5,.5]] (Â1·Â2 would be [[.5,.5],[.25,.75]])
  const l1 = Float32Array.from([1, 0, 1, 0]);
  const l2 = Float32Array.from([0, 1, 0, 1]);
  close(rollout([l1, l2], 2), [0.75, 0.25, 0.5, 0.5]);
  close(rollout([l1], 2), [1, 0, 0.5, 0.5]);
  assert.throws(() => rollout([], 2), isLensError);
});

test('fixture: rows sum to 1; ablation "all" equals the real rollout; content-only differs', async () => {
  const r = fixtureResult('text0');
  const real = await rolloutResult(r);
  for (let i = 0; i < r.n; i++) {
    let s = 0;
    for (let j = 0; j < r.n; j++) s += at(real, i * r.n + j);
    assert.ok(Math.abs(s - 1) < 1e-5);
  }
  const all = await rolloutResult(r, { ablation: 'all' });
  for (let k = 0; k < real.length; k++) assert.ok(Math.abs(at(all, k) - at(real, k)) < 1e-5);
  const content = await rolloutResult(r, { ablation: 'content-only' });
  assert.ok(content.some((v, k) => Math.abs(v - at(real, k)) > 1e-3));
  close(await rolloutResult(r, { upToLayer: 0 }), Array.from(residualAttention(r.tensor(0, 'probs'), r.n)));
});

test('a result with a layer gap is refused', async () => {
  const r = fixtureResult('short5');
  const gap = new ExplainResult(r.model, r.inputIds, r.tokens, r.scale, [
    { layer: 1, c2c: r.tensor(1, 'c2c'), probs: r.tensor(1, 'probs') },
  ]);
  await assert.rejects(async () => rolloutResult(gap), isLensError);
});
