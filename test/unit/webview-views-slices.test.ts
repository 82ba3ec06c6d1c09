// The host side of the analysis views: answerRequest on a real fixture ExplainResult (HF-computed v3_tiny
// outputs), through the same parse → answer → structured-clone path the panel uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ablateLayer,
  aggregate,
  bucketLens,
  discountSpecialColumns,
  distanceProfile,
  rolloutResult,
  termShareGrid,
} from '../../src/analysis';
import { answerRequest } from '../../src/extension/lens/request-dispatch';
import { memo } from '../../src/extension/lens/result-memo';
import { positionSpecOf } from '../../src/extension/common/result-shape';
import {
  fromBuffer,
  parseRequestBody,
  parseWebviewMessage,
  type AblationResponse,
  type AggregateResponse,
  type BucketsResponse,
  type DistanceResponse,
  type RequestBody,
  type RolloutResponse,
  type SharesResponse,
} from '../../src/shared/protocol/lens';
import { fixtureResult, V3_SPEC } from './analysis-fixture';

const result = fixtureResult('text0');
const n = result.n;
const ctx = { positions: V3_SPEC };

/** Parses the body as the host does and clones the answer as postMessage would. */
async function ask<T>(body: RequestBody): Promise<T> {
  const parsed = parseRequestBody(JSON.parse(JSON.stringify(body)));
  assert.ok(parsed, `request ${JSON.stringify(body)} parses`);
  return structuredClone(await answerRequest(result, parsed, ctx)) as T;
}

test('aggregate: mean and max over heads match the analysis functions, specials discounted on request', async () => {
  for (const op of ['mean', 'max'] as const) {
    const r = await ask<AggregateResponse>({ type: 'aggregate', layer: 1, head: op, kind: 'probs', discountSpecial: false });
    assert.deepEqual([...fromBuffer(r.data, n * n)], [...(await aggregate(result, 'probs', op, { layers: [1] }))]);
  }
  const special = result.tokens.map((t) => t.special);
  assert.ok(special.some(Boolean), 'the fixture has [CLS]/[SEP]');
  const d = await ask<AggregateResponse>({ type: 'aggregate', layer: 0, head: 'mean', kind: 'probs', discountSpecial: true });
  const got = fromBuffer(d.data, n * n);
  assert.deepEqual([...got], [...discountSpecialColumns(await aggregate(result, 'probs', 'mean', { layers: [0] }), n, special)]);
  for (let j = 0; j < n; j++) if (special[j]) assert.equal(got[j], 0, 'special key columns are zero');
  const row0 = got.subarray(0, n).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(row0 - 1) < 1e-5, `rows renormalised, got ${row0}`);
  const all = await ask<AggregateResponse>({ type: 'aggregate', layer: 'all', head: 'max', kind: 'c2c', discountSpecial: false });
  assert.deepEqual([...fromBuffer(all.data, n * n)], [...(await aggregate(result, 'c2c', 'max'))]);
  const one = await ask<AggregateResponse>({ type: 'aggregate', layer: 1, head: 2, kind: 'probs', discountSpecial: false });
  assert.deepEqual([...fromBuffer(one.data, n * n)], [...result.slice(1, 2, 'probs')]);
});

test('aggregate refuses discounting a raw term and an unknown layer with one line', async () => {
  await assert.rejects(
    async () => answerRequest(result, { type: 'aggregate', layer: 0, head: 'mean', kind: 'c2c', discountSpecial: true }),
    /probs only/,
  );
  await assert.rejects(
    async () => answerRequest(result, { type: 'aggregate', layer: 99, head: 'mean', kind: 'probs', discountSpecial: false }),
    /layer 99/,
  );
});

test('shares: the layer × head grid and its labels', async () => {
  const r = await ask<SharesResponse>({ type: 'shares', weighting: 'uniform' });
  const g = await termShareGrid(result);
  assert.equal(r.layers.length * r.heads, r.labels.length);
  assert.deepEqual([...fromBuffer(r.content, r.labels.length)], [...g.content]);
  assert.deepEqual([...fromBuffer(r.c2p!, r.labels.length)], [...g.c2p!]);
  assert.deepEqual(r.labels, g.labels);
  const c = fromBuffer(r.content, r.labels.length);
  for (const x of c) assert.ok(x >= 0 && x <= 1);
});

test('ablation: one head of the layer ablation, with per-row KL and TV', async () => {
  const r = await ask<AblationResponse>({ type: 'ablation', layer: 1, head: 3, preset: 'content-only' });
  const a = await ablateLayer(result, 1, 'content-only');
  const nn = n * n;
  assert.deepEqual(r.kept, ['c2c']);
  assert.deepEqual([...fromBuffer(r.probs, nn)], [...a.probs.subarray(3 * nn, 4 * nn)]);
  assert.deepEqual([...fromBuffer(r.diff, nn)], [...a.diff.subarray(3 * nn, 4 * nn)]);
  assert.deepEqual([...fromBuffer(r.real, nn)], [...result.slice(1, 3, 'probs')]);
  assert.deepEqual([...fromBuffer(r.kl, n)], [...a.kl.subarray(3 * n, 4 * n)]);
  assert.deepEqual([...fromBuffer(r.tv, n)], [...a.tv.subarray(3 * n, 4 * n)]);
  // 'all' reproduces the real probabilities.
  const same = await ask<AblationResponse>({ type: 'ablation', layer: 0, head: 0, preset: 'all' });
  const tv = fromBuffer(same.tv, n);
  tv.forEach((x, i) => assert.ok(x < 1e-5, `TV of the identity ablation is ~0, row ${i}: ${x}`));
});

test('ablation answers stay whole when asked twice (the memo keeps arrays, not posted buffers)', async () => {
  const a = (await answerRequest(result, { type: 'ablation', layer: 0, head: 1, preset: 'no-p2c' }, ctx)) as AblationResponse;
  const b = (await answerRequest(result, { type: 'ablation', layer: 0, head: 1, preset: 'no-p2c' }, ctx)) as AblationResponse;
  assert.notEqual(a.probs, b.probs, 'fresh buffers per answer');
  structuredClone(a, { transfer: [a.probs] }); // detaches a.probs, as a transferring transport would
  assert.equal(fromBuffer(b.probs, n * n).length, n * n);
  const c = (await answerRequest(result, { type: 'ablation', layer: 0, head: 1, preset: 'no-p2c' }, ctx)) as AblationResponse;
  assert.equal(c.probs.byteLength, n * n * 4);
});

test('distance: c2p, p2c and probs profiles over δ, all rows and one query row', async () => {
  const r = await ask<DistanceResponse>({ type: 'distance', layer: 0, head: 2, query: null });
  for (const k of ['c2p', 'p2c', 'probs'] as const) {
    const p = distanceProfile(result.slice(0, 2, k), n);
    const s = r.series[k]!;
    assert.equal(s.peakDelta, p.peakDelta);
    assert.deepEqual([...fromBuffer(s.mean, 2 * n - 1)], [...Float32Array.from(p.mean)]);
    assert.deepEqual([...fromBuffer(s.std, 2 * n - 1)], [...Float32Array.from(p.std)]);
  }
  const q = await ask<DistanceResponse>({ type: 'distance', layer: 0, head: 2, query: 3 });
  const m = fromBuffer(q.series.c2p!.mean, 2 * n - 1);
  // Row 3 alone: δ = 3 − j for j = 0..n−1, so δ ∈ [3 − (n−1), 3]; everything else has no cell (NaN).
  for (let k = 0; k < 2 * n - 1; k++) {
    const d = k - (n - 1);
    if (d <= 3 && d >= 3 - (n - 1)) assert.equal(m[k], result.value(0, 2, 'c2p', 3, 3 - d));
    else assert.ok(Number.isNaN(m[k]));
  }
  await assert.rejects(async () => answerRequest(result, { type: 'distance', layer: 0, head: 2, query: n }), /out of range/);
});

test('buckets: zones and table rows per pair from the model geometry', async () => {
  const r = await ask<BucketsResponse>({ type: 'buckets' });
  const b = bucketLens(n, V3_SPEC);
  assert.equal(r.n, n);
  assert.deepEqual([...fromBuffer(r.zoneOf, n * n)], [...b.zoneOf]);
  assert.deepEqual([...fromBuffer(r.rowOf, n * n)], [...b.rowOf]);
  assert.deepEqual(
    r.groups.map((g) => g.row),
    b.groups.map((g) => g.row),
  );
  assert.ok(r.zones.includes('log'));
  await assert.rejects(async () => answerRequest(result, { type: 'buckets' }), /position settings/);
});

test('positionSpecOf resolves the span like the config reader', async () => {
  assert.deepEqual(positionSpecOf({ position_buckets: 16, max_relative_positions: 32 }), V3_SPEC);
  assert.deepEqual(positionSpecOf({ position_buckets: 0, max_relative_positions: 512 }), {
    positionBuckets: 0,
    maxRelativePositions: 512,
    attSpan: 512,
  });
});

test('rollout: real and ablated, as the analysis computes them', async () => {
  const r = await ask<RolloutResponse>({ type: 'rollout', preset: 'all' });
  assert.deepEqual([...fromBuffer(r.data, n * n)], [...(await rolloutResult(result))]);
  const a = await ask<RolloutResponse>({ type: 'rollout', preset: 'position-only' });
  assert.deepEqual([...fromBuffer(a.data, n * n)], [...(await rolloutResult(result, { ablation: 'position-only' }))]);
  assert.notDeepEqual([...fromBuffer(a.data, n * n)], [...fromBuffer(r.data, n * n)]);
});

test('memo computes once per key and result', async () => {
  let calls = 0;
  const make = () => ++calls;
  assert.equal(memo(result, 'test/x', make), 1);
  assert.equal(memo(result, 'test/x', make), 1);
  assert.equal(memo(fixtureResult('text0'), 'test/x', make), 2, 'another result has its own memo');
});

test('the new requests and the export message are validated like the old ones', async () => {
  assert.equal(parseRequestBody({ type: 'ablation', layer: 0, head: 0, preset: 'bogus' }), undefined);
  assert.equal(parseRequestBody({ type: 'aggregate', layer: 'x', head: 'mean', kind: 'probs' }), undefined);
  assert.equal(parseRequestBody({ type: 'rollout', preset: 'all;rm' }), undefined);
  assert.deepEqual(parseRequestBody({ type: 'distance', layer: 1, head: 0 }), { type: 'distance', layer: 1, head: 0, query: null });
  assert.equal(parseWebviewMessage({ type: 'export', format: 'exe' }), undefined);
  assert.deepEqual(parseWebviewMessage({ type: 'export', format: 'svg', svg: '<svg/>', requestId: 4, name: 'a/../b c' }), {
    type: 'export',
    format: 'svg',
    svg: '<svg/>',
    requestId: 4,
    name: 'a-..-b-c',
  });
});
