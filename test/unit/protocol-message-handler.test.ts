import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageHandler } from '../../src/shared/messaging/message-handler';
import {
  imageAsking,
  lensAnswering,
  lensAsking,
  toBuffer,
  type HostToWebview,
  type RequestBody,
  type ResponseBody,
  type WebviewToHost,
} from '../../src/shared/protocol/lens';
import { compareAnswering, compareAsking, type CompareToHost, type CompareToWebview } from '../../src/shared/protocol/compare';
import { runAsking, type RunToHost } from '../../src/shared/interventions';

const tick = () => new Promise((res) => setTimeout(res, 0));

test('lens: the page asks, the host answers, each reply typed by its request and cloned like the webview transport', async () => {
  const toHost: WebviewToHost[] = [];
  const toPage: HostToWebview[] = [];
  let current = 3;
  const host = new MessageHandler({
    post: (m: HostToWebview) => void toPage.push(structuredClone(m)),
    answers: lensAnswering,
    answer: (body: RequestBody, { resultId }): ResponseBody => {
      if (resultId !== current) throw new Error('this result has been replaced');
      if (body.type !== 'slice') throw new Error(`no ${body.type}`);
      return { type: 'slice', layer: body.layer, head: body.head, kind: body.kind, n: 1, data: toBuffer(new Float32Array([0.5])) };
    },
  });
  const page = new MessageHandler({ post: (m: WebviewToHost) => void toHost.push(structuredClone(m)), asks: lensAsking });
  const pump = async () => {
    await tick();
    for (const m of toHost.splice(0)) host.receive(m);
    await tick();
    for (const m of toPage.splice(0)) page.receive(m);
  };

  const slice = page.request({ type: 'slice', layer: 0, head: 1, kind: 'probs' }, { resultId: 3 });
  const buckets = page.request({ type: 'buckets' }, { resultId: 3 });
  assert.deepEqual(toHost[0], { type: 'request', id: 1, resultId: 3, body: { type: 'slice', layer: 0, head: 1, kind: 'probs' } });
  await pump();
  const s = await slice; // SliceResponse, no cast
  assert.equal(s.n, 1);
  assert.ok(s.data instanceof ArrayBuffer, 'the matrix arrives as an ArrayBuffer');
  await assert.rejects(buckets, /no buckets/);

  current = 4;
  const stale = page.request({ type: 'slice', layer: 0, head: 0, kind: 'c2c' }, { resultId: 3 });
  await tick();
  const [req] = toHost.splice(0);
  assert.ok(req);
  host.receive(req);
  await tick();
  assert.deepEqual(toPage[0], { type: 'response', id: 3, resultId: 3, ok: false, error: 'this result has been replaced' });
  const [res] = toPage.splice(0);
  assert.ok(res);
  page.receive(res);
  await assert.rejects(stale, /replaced/);
});

test('compare: requests and responses keep their wire shape ({pairId, side, body} out, {n, data} back)', async () => {
  const toHost: CompareToHost[] = [];
  const toPage: CompareToWebview[] = [];
  const host = new MessageHandler({
    post: (m: CompareToWebview) => void toPage.push(m),
    answers: compareAnswering,
    answer: async (body, { side }) => {
      if (side === 'b') throw new Error(`b has no ${body.kind}`);
      return { n: 2, data: toBuffer(new Float32Array([1, 2, 3, 4])) };
    },
  });
  const page = new MessageHandler({ post: (m: CompareToHost) => void toHost.push(m), asks: compareAsking });
  const a = page.request({ layer: 1, head: 0, kind: 'probs' }, { pairId: 7, side: 'a' });
  const b = page.request({ layer: 0, head: 0, kind: 'rest' }, { pairId: 7, side: 'b' });
  assert.deepEqual(toHost, [
    { type: 'request', id: 1, pairId: 7, side: 'a', body: { layer: 1, head: 0, kind: 'probs' } },
    { type: 'request', id: 2, pairId: 7, side: 'b', body: { layer: 0, head: 0, kind: 'rest' } },
  ]);
  for (const m of toHost) assert.equal(host.receive(m), true);
  await tick();
  const [ok, failed] = toPage;
  assert.equal(ok?.type === 'response' && ok.ok && ok.n, 2);
  assert.deepEqual(Object.keys(ok ?? {}), ['type', 'id', 'pairId', 'ok', 'n', 'data']);
  assert.deepEqual(failed, { type: 'response', id: 2, pairId: 7, ok: false, error: 'b has no rest' });
  for (const m of toPage) page.receive(m);
  assert.equal((await a).n, 2);
  await assert.rejects(b, /b has no rest/);
});

test('runs: progress reaches the caller, a cancelled run rejects with cancelled set, the wire is the body plus its id', async () => {
  const sent: RunToHost[] = [];
  const runs = new MessageHandler({ post: (m: RunToHost) => void sent.push(m), asks: runAsking });
  const steps: number[] = [];
  const sweep = runs.start({ type: 'sweep', resultId: 2, terms: ['c2p'], mode: 'zero', position: null }, undefined, (p) =>
    steps.push(p.done),
  );
  assert.deepEqual(sent[0], { type: 'sweep', resultId: 2, terms: ['c2p'], mode: 'zero', position: null, id: sweep.id });
  runs.receive({ type: 'runProgress', id: sweep.id, done: 1, total: 4, layer: 0 });
  runs.receive({ type: 'runProgress', id: sweep.id, done: 2, total: 4, layer: 0 });
  runs.receive({ type: 'runResult', id: sweep.id, ok: false, error: 'cancelled', cancelled: true });
  await assert.rejects(sweep.reply, (e: Error & { cancelled?: boolean }) => e.cancelled === true);
  assert.deepEqual(steps, [1, 2]);
  const iv = runs.start({ type: 'intervene', resultId: 2, entries: '0.0:c2p', mode: 'mean', position: 3, top: 5 }, undefined);
  runs.receive({ type: 'runResult', id: iv.id, ok: true, ranking: undefined });
  assert.deepEqual(await iv.reply, { intervention: undefined, ranking: undefined });
});

test("image: a request given up on no longer matches its late reply (the view's own Export button handles it)", async () => {
  const sent: HostToWebview[] = [];
  const images = new MessageHandler({ post: (m: HostToWebview) => void sent.push(m), asks: imageAsking });
  const first = images.start({ format: 'png' }, undefined);
  assert.deepEqual(sent[0], { type: 'exportImage', requestId: first.id, format: 'png' });
  images.reject(first.id, 'timed out');
  await assert.rejects(first.reply, /timed out/);
  assert.equal(images.receive({ type: 'export', requestId: first.id, format: 'png', dataUrl: 'data:' }), false);
  assert.equal(images.receive({ type: 'export', format: 'svg', svg: '<svg/>' }), false, 'no requestId: a button in the view');
  const second = images.start({ format: 'svg' }, undefined);
  assert.equal(images.receive({ type: 'export', requestId: second.id, format: 'svg', svg: '<svg/>' }), true);
  assert.equal((await second.reply).svg, '<svg/>');
});
