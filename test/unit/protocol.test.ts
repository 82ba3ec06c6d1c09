import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExplainResult, type LayerTensors } from '../../src/engine/result/explain-result';
import type { ModelInfo, Token } from '../../src/engine/types';
import { answerRequest, layerOf, prefetchAround } from '../../src/extension/lens/request-dispatch';
import { downsampleInto, meanRowEntropy } from '../../src/extension/lens/matrix-math';
import { availableKinds, protocolTokens } from '../../src/extension/common/result-shape';
import { MessageHandler } from '../../src/shared/messaging/message-handler';
import {
  fromBuffer,
  lensAsking,
  parseRequestBody,
  parseWebviewMessage,
  toBuffer,
  type HeadsResponse,
  type HostToWebview,
  type OverviewResponse,
  type RowResponse,
  type SliceResponse,
  type WebviewToHost,
} from '../../src/shared/protocol/lens';
import { at } from './helpers';

/** A real ExplainResult over deterministic tensors: 2 layers × 2 heads × 5 tokens, softmax-normalised probs. */
function makeResult(withP2c = true): ExplainResult {
  const n = 5;
  const H = 2;
  const layers: LayerTensors[] = [0, 1].map((layer) => {
    const t = (seed: number) => Float32Array.from({ length: H * n * n }, (_, k) => Math.sin(k * 0.37 + seed + layer));
    const c2c = t(1);
    const c2p = t(2);
    const p2c = withP2c ? t(3) : undefined;
    const probs = new Float32Array(H * n * n);
    for (let r = 0; r < H * n; r++) {
      let z = 0;
      for (let j = 0; j < n; j++) z += Math.exp(at(c2c, r * n + j));
      for (let j = 0; j < n; j++) probs[r * n + j] = Math.exp(at(c2c, r * n + j)) / z;
    }
    return { layer, c2c, c2p, p2c, probs };
  });
  const model: ModelInfo = {
    path: '/m',
    name: 'tiny',
    type: 'deberta-v2',
    layers: 2,
    heads: H,
    head_dim: 4,
    terms: withP2c ? ['c2c', 'c2p', 'p2c'] : ['c2c', 'c2p'],
    execution_provider: 'cpu',
    checkpoint_hash: 'x',
  };
  const tokens: Token[] = [
    { id: 1, text: '[CLS]', start: 0, end: 0, special: true },
    { id: 10, text: '▁Hello', start: 0, end: 5, special: false },
    { id: 11, text: '▁big', start: 6, end: 9, special: false },
    { id: 12, text: '▁world', start: 10, end: 15, special: false },
    { id: 2, text: '[SEP]', start: 15, end: 15, special: true },
  ];
  return new ExplainResult(
    model,
    tokens.map((t) => t.id),
    tokens,
    2,
    layers,
    'Hello big world',
  );
}

test('toBuffer copies exactly the view, not the whole backing tensor', async () => {
  const big = Float32Array.from({ length: 100 }, (_, k) => k);
  const view = big.subarray(10, 20);
  const buf = toBuffer(view);
  assert.equal(buf.byteLength, 40);
  assert.deepEqual([...new Float32Array(buf)], [...view]);
  big[10] = -1; // the copy must not alias
  assert.equal(new Float32Array(buf)[0], 10);
});

test('a slice survives structured cloning (the webview transport) bit for bit', async () => {
  const r = makeResult();
  const res = (await answerRequest(r, { type: 'slice', layer: 1, head: 1, kind: 'c2p' })) as SliceResponse;
  const msg: HostToWebview = { type: 'response', id: 7, resultId: 3, ok: true, body: res };
  const cloned = structuredClone(msg);
  assert.equal(cloned.type, 'response');
  if (cloned.type !== 'response' || !cloned.ok) throw new Error('bad clone');
  const body = cloned.body as SliceResponse;
  assert.ok(body.data instanceof ArrayBuffer, 'payload is an ArrayBuffer, not a number array');
  assert.deepEqual(fromBuffer(body.data, body.n * body.n), r.slice(1, 1, 'c2p'));
});

test('fromBuffer rejects a payload whose size does not match its header', async () => {
  assert.throws(() => fromBuffer(new Float32Array(3).buffer, 4), /3 floats, expected 4/);
  assert.deepEqual([...fromBuffer(new Float32Array([1, 2]), 2)], [1, 2]);
});

test('scores slice equals (c2c + c2p + p2c) / scale', async () => {
  const r = makeResult();
  const s = (await answerRequest(r, { type: 'slice', layer: 0, head: 0, kind: 'scores' })) as SliceResponse;
  const v = fromBuffer(s.data, 25);
  const c2c = r.slice(0, 0, 'c2c');
  const c2p = r.slice(0, 0, 'c2p');
  const p2c = r.slice(0, 0, 'p2c');
  for (let k = 0; k < 25; k++) assert.ok(Math.abs(at(v, k) - (at(c2c, k) + at(c2p, k) + at(p2c, k)) / 2) < 1e-6);
});

test('row request returns every kind the model has for one query', async () => {
  const r = makeResult(false);
  const res = (await answerRequest(r, { type: 'row', layer: 1, head: 0, i: 2 })) as RowResponse;
  assert.deepEqual(Object.keys(res.rows).sort(), ['c2c', 'c2p', 'probs', 'scores']);
  assert.deepEqual(fromBuffer(res.rows.probs!, 5), r.slice(1, 0, 'probs').subarray(10, 15));
  assert.deepEqual(availableKinds(r), ['c2c', 'c2p', 'scores', 'probs']);
});

test('requests the result cannot answer give one-line errors', async () => {
  const r = makeResult(false);
  await assert.rejects(async () => answerRequest(r, { type: 'slice', layer: 0, head: 0, kind: 'p2c' }), /no p2c term/);
  await assert.rejects(async () => answerRequest(r, { type: 'slice', layer: 5, head: 0, kind: 'c2c' }), /layer 5/);
  await assert.rejects(async () => answerRequest(r, { type: 'slice', layer: 0, head: 2, kind: 'c2c' }), /head 2/);
  await assert.rejects(async () => answerRequest(r, { type: 'row', layer: 0, head: 0, i: 5 }), /token 5/);
});

test('heads request block-averages each head to maxSize', async () => {
  const r = makeResult();
  const res = (await answerRequest(r, { type: 'heads', layer: 0, kind: 'c2c', maxSize: 2 })) as HeadsResponse;
  assert.equal(res.size, 2);
  const all = fromBuffer(res.data, 2 * 2 * 2);
  const s = r.slice(0, 1, 'c2c'); // head 1, blocks: rows/cols [0,2) and [2,5)
  let sum = 0;
  for (let i = 2; i < 5; i++) for (let j = 0; j < 2; j++) sum += at(s, i * 5 + j);
  assert.ok(Math.abs(at(all, 4 + 2) - sum / 6) < 1e-6);
  const full = (await answerRequest(r, { type: 'heads', layer: 0, kind: 'c2c', maxSize: 64 })) as HeadsResponse;
  assert.equal(full.size, 5, 'never upsamples');
  assert.deepEqual(fromBuffer(full.data, 50).subarray(25), r.slice(0, 1, 'c2c'));
});

test('downsampleInto preserves the mean of a matrix when blocks are equal', async () => {
  const src = Float32Array.from({ length: 16 }, (_, k) => k);
  const dst = new Float32Array(4);
  downsampleInto(src, 4, 2, dst);
  assert.deepEqual([...dst], [2.5, 4.5, 10.5, 12.5]);
});

test('overview: entropy for probs, mean |value| for terms', async () => {
  const r = makeResult();
  const ov = (await answerRequest(r, { type: 'overview', kind: 'probs' })) as OverviewResponse;
  assert.equal(ov.metric, 'entropy');
  const v = fromBuffer(ov.data, 4);
  assert.ok(Math.abs(at(v, 1 * 2 + 1) - meanRowEntropy(r.slice(1, 1, 'probs'), 5)) < 1e-6);
  assert.ok(v.every((x) => x > 0 && x <= Math.log(5) + 1e-6));
  const uniform = new Float32Array(9).fill(1 / 3);
  assert.ok(Math.abs(meanRowEntropy(uniform, 3) - Math.log(3)) < 1e-6);
  const ov2 = (await answerRequest(r, { type: 'overview', kind: 'c2c' })) as OverviewResponse;
  assert.equal(ov2.metric, 'mean-abs');
});

test('parseWebviewMessage accepts well-formed messages and rejects malformed ones', async () => {
  assert.deepEqual(parseWebviewMessage({ type: 'ready', version: 1 }), { type: 'ready', version: 1 });
  const req = { type: 'request', id: 4, resultId: 2, body: { type: 'slice', layer: 0, head: 1, kind: 'c2p' } };
  assert.deepEqual(parseWebviewMessage(structuredClone(req)), req);
  assert.equal(
    parseWebviewMessage({ type: 'request', id: 4, resultId: 2, body: { type: 'slice', layer: 0, head: 1, kind: 'bogus' } }),
    undefined,
  );
  assert.equal(parseWebviewMessage({ type: 'request', id: '4', resultId: 2, body: req.body }), undefined);
  assert.equal(parseWebviewMessage({ type: 'evil' }), undefined);
  assert.equal(parseWebviewMessage(null), undefined);
  assert.equal(parseRequestBody({ type: 'heads', layer: 0, kind: 'probs', maxSize: 0 }), undefined);
  const hover = parseWebviewMessage({ type: 'hover', resultId: 1, hover: { i: null, layer: 0, head: 0, kind: 'probs', pinned: false } });
  assert.equal(hover?.type, 'hover');
  assert.equal(parseWebviewMessage({ type: 'hover', resultId: 1, hover: { i: 1.5, layer: 0, head: 0, kind: 'probs' } }), undefined);
});

test('the message handler pairs responses with requests by id and rejects stale ones', async () => {
  const sent: WebviewToHost[] = [];
  const h = new MessageHandler({ post: (m: WebviewToHost) => void sent.push(m), asks: lensAsking });
  const a = h.start({ type: 'buckets' }, { resultId: 1 });
  const b = h.start({ type: 'overview', kind: 'probs' }, { resultId: 1 });
  assert.notEqual(a.id, b.id);
  assert.deepEqual(sent[1], { type: 'request', id: b.id, resultId: 1, body: { type: 'overview', kind: 'probs' } });
  const body: OverviewResponse = { type: 'overview', kind: 'probs', metric: 'entropy', layers: [0], heads: 1, data: new ArrayBuffer(4) };
  assert.equal(h.receive({ type: 'response', id: b.id, resultId: 1, ok: true, body }), true);
  assert.equal(await b.reply, body);
  assert.equal(h.receive({ type: 'response', id: b.id, resultId: 1, ok: true, body }), false, 'a response settles once');
  const c = h.start({ type: 'buckets' }, { resultId: 1 });
  h.rejectAll('superseded');
  await assert.rejects(a.reply, /superseded/);
  await assert.rejects(c.reply, /superseded/);
  assert.equal(h.inFlight, 0);
  const d = h.start({ type: 'buckets' }, { resultId: 1 });
  h.receive({ type: 'response', id: d.id, resultId: 1, ok: false, error: 'layer 9 is not in this result' });
  await assert.rejects(d.reply, /layer 9/);
});

test('protocolTokens keeps UTF-16 offsets and special flags', async () => {
  const toks = protocolTokens(makeResult());
  assert.deepEqual(toks[1], { i: 1, text: '▁Hello', start: 0, end: 5, special: false });
  assert.equal(at(toks, 4).special, true);
});

test('answers requests from a real explain of the v3_tiny fixture', async () => {
  const os = await import('node:os');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { openModel } = await import('../../src/engine/model/open-model');
  const { FIXTURES } = await import('./helpers');
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-protocol-'));
  const model = await openModel(path.join(FIXTURES, 'deberta', 'v3_tiny'), { executionProvider: 'cpu', threads: 1, cacheDir });
  try {
    const text = 'Hello big\nworld';
    const r = await model.explain({ text });
    const toks = protocolTokens(r);
    for (const t of toks) assert.ok(t.start >= 0 && t.end <= text.length && t.start <= t.end, `token ${t.i} offsets in range`);
    const probs = (await answerRequest(r, { type: 'slice', layer: 1, head: 3, kind: 'probs' })) as SliceResponse;
    const p = fromBuffer(structuredClone(probs).data, r.n * r.n);
    for (let i = 0; i < r.n; i++) {
      let s = 0;
      for (let j = 0; j < r.n; j++) s += at(p, i * r.n + j);
      assert.ok(Math.abs(s - 1) < 1e-4, `row ${i} of probs sums to 1 (${s})`);
    }
    const row = (await answerRequest(r, { type: 'row', layer: 0, head: 0, i: 2 })) as RowResponse;
    assert.deepEqual(Object.keys(row.rows).sort(), ['c2c', 'c2p', 'p2c', 'probs', 'scores']);
    assert.equal(fromBuffer(row.rows.c2p!, r.n)[4], r.value(0, 0, 'c2p', 2, 4));
    // A request for layer 0 of a fresh result computes layer 0 only; prefetching then computes layer 1.
    const fresh = await model.explain({ text });
    assert.equal(layerOf({ type: 'slice', layer: 0, head: 0, kind: 'c2c' }), 0);
    assert.equal(layerOf({ type: 'shares', weighting: 'uniform' }), undefined);
    await answerRequest(fresh, { type: 'slice', layer: 0, head: 0, kind: 'c2c' });
    assert.deepEqual([fresh.isLoaded(0), fresh.isLoaded(1)], [true, false]);
    prefetchAround(fresh, 0);
    for (let k = 0; k < 100 && !fresh.isLoaded(1); k++) await new Promise((res) => setTimeout(res, 50));
    assert.equal(fresh.isLoaded(1), true, 'layer 1 was computed without being asked for');
  } finally {
    await model.dispose();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
});
