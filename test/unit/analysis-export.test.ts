import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vm from 'node:vm';
import { crc32 } from '../../src/shared/crc32';
import { decodeNpy, encodeNpy } from '../../src/analysis/export/npy';
import { writeZip } from '../../src/engine/zip/zip-writer';
import { readNpz, readZip, toNpz } from '../../src/analysis/export/npz';
import { float32ForJson, toJson, toJsonText } from '../../src/analysis/export/json';
import { toHtmlReport } from '../../src/analysis/export/html-report';
import { ExplainResult } from '../../src/engine/result/explain-result';
import { isLensError } from '../../src/engine/errors';
import { fixtureResult } from './analysis-fixture';
import { at, field } from './helpers';
import type { ReportPayload } from '../../src/shared/protocol/report';

/** One layer's tensors of a loaded result, as the ExplainResult constructor takes them. */
const layerOf = (r: ExplainResult, layer: number) => ({
  c2c: r.tensor(layer, 'c2c'),
  c2p: r.tensor(layer, 'c2p'),
  p2c: r.tensor(layer, 'p2c'),
  probs: r.tensor(layer, 'probs'),
});

const bytes = (s: string) => new TextEncoder().encode(s);

test('CRC-32 check values', async () => {
  assert.equal(crc32(bytes('123456789')), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(bytes('The quick brown fox jumps over the lazy dog')), 0x414fa339);
});

test('npy: header layout and round trip', async () => {
  const f = Float32Array.from([1.5, -2, 3.25, 0, 7, 8]);
  const b = encodeNpy(f, [2, 3]);
  assert.deepEqual(Array.from(b.subarray(0, 8)), [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  const headerLen = at(b, 8) | (at(b, 9) << 8);
  assert.equal((10 + headerLen) % 64, 0);
  const header = new TextDecoder().decode(b.subarray(10, 10 + headerLen));
  assert.equal(header, `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.padEnd(headerLen - 1) + '\n');
  assert.equal(b.length, 10 + headerLen + 24);
  const back = decodeNpy(b);
  assert.deepEqual(back.shape, [2, 3]);
  assert.deepEqual(Array.from(back.data), Array.from(f));
  const ids = decodeNpy(encodeNpy(Int32Array.from([1, 2, 3]), [3]));
  assert.equal(ids.dtype, 'int32');
  assert.deepEqual(Array.from(ids.data), [1, 2, 3]);
  assert.throws(() => encodeNpy(f, [4]), isLensError);
  assert.throws(() => decodeNpy(b.subarray(0, b.length - 4)), isLensError);
});

test('zip: stored entries round trip; a flipped byte is caught by the CRC', async () => {
  const z = writeZip([
    { name: 'a.txt', data: bytes('hello') },
    { name: 'dir/b.bin', data: Uint8Array.from([0, 255, 7]) },
  ]);
  // local header signature, then the end record at the very end
  assert.deepEqual(Array.from(z.subarray(0, 4)), [0x50, 0x4b, 0x03, 0x04]);
  assert.deepEqual(Array.from(z.subarray(z.length - 22, z.length - 18)), [0x50, 0x4b, 0x05, 0x06]);
  const m = readZip(z);
  assert.deepEqual([...m.keys()], ['a.txt', 'dir/b.bin']);
  assert.equal(new TextDecoder().decode(m.get('a.txt')), 'hello');
  const bad = Uint8Array.from(z);
  bad[30 + 5] = at(bad, 30 + 5) ^ 1; // first byte of a.txt's data
  assert.throws(
    () => readZip(bad, 'x.npz'),
    (e: unknown) => isLensError(e) && /x\.npz.*CRC/.test((e as Error).message),
  );
  assert.throws(() => readZip(bytes('not a zip at all, no end record here')), isLensError);
});

test('zip64: entries, offsets and the directory past the limit use zip64 records, and read back the same', async () => {
  const r = fixtureResult('text0');
  const plain = await toNpz(r);
  const z64 = await toNpz(r, { zip64Above: 0 }); // every size and offset "too large"
  assert.notDeepEqual(z64, plain);
  // zip64 end record and locator before the classic end record, which points at them with 0xFFFF / 0xFFFFFFFF
  const dv = new DataView(z64.buffer, z64.byteOffset, z64.byteLength);
  assert.equal(dv.getUint32(z64.length - 22 - 20, true), 0x07064b50);
  assert.equal(dv.getUint32(z64.length - 18 + 12, true), 0xffffffff);
  const a = readZip(plain);
  const b = readZip(z64);
  assert.deepEqual([...b.keys()], [...a.keys()]);
  for (const [name, data] of a) assert.deepEqual(b.get(name), data, name);
  assert.deepEqual(await toNpz(readNpz(z64)), plain);
});

test('npz round trip equals the in-memory result', async () => {
  const r = fixtureResult('text0');
  const z = await toNpz(r);
  const names = [...readZip(z).keys()];
  assert.ok(
    names.includes('input_ids.npy') &&
      names.includes('meta.json') &&
      names.includes('layer1_p2c.npy') &&
      names.includes('layer0_probs.npy'),
  );
  const back = readNpz(z);
  assert.deepEqual(back.inputIds, r.inputIds);
  assert.deepEqual(back.tokens, r.tokens);
  assert.deepEqual(back.model, r.model);
  assert.equal(back.scale, r.scale);
  assert.equal(back.text, r.text);
  assert.deepEqual(back.layers, r.layers);
  for (const l of r.layers) for (const k of ['c2c', 'c2p', 'p2c', 'probs'] as const) assert.deepEqual(back.tensor(l, k), r.tensor(l, k));
  // writing is deterministic
  assert.deepEqual(await toNpz(back), z);
});

test('npz of a model without p2c has no p2c arrays and reads back', async () => {
  const r = fixtureResult('short5');
  const noP2c = new ExplainResult(
    { ...r.model, terms: ['c2c', 'c2p'] },
    r.inputIds,
    r.tokens,
    r.scale,
    r.layers.map((layer) => ({ layer, c2c: r.tensor(layer, 'c2c'), c2p: r.tensor(layer, 'c2p'), probs: r.tensor(layer, 'probs') })),
  );
  const z = await toNpz(noP2c);
  assert.ok(![...readZip(z).keys()].some((n) => n.includes('p2c')));
  assert.equal(readNpz(z).has('p2c'), false);
});

test('JSON matches DESIGN §4 and the text form parses to the same object', async () => {
  assert.equal(float32ForJson(Math.fround(0.1)), 0.1);
  assert.equal(float32ForJson(Math.fround(1 / 3)), 0.33333334);
  assert.equal(float32ForJson(NaN), null);
  const r = fixtureResult('short5');
  const j = (await toJson(r)) as {
    model: Record<string, unknown>;
    input_ids: number[];
    tokens: unknown[];
    scale: number;
    layers: Record<string, unknown>[];
  };
  assert.deepEqual(Object.keys(j), ['model', 'input_ids', 'tokens', 'scale', 'layers']);
  assert.deepEqual(Object.keys(j.model), [
    'path',
    'name',
    'type',
    'layers',
    'heads',
    'head_dim',
    'terms',
    'execution_provider',
    'checkpoint_hash',
  ]);
  assert.deepEqual(Object.keys(at(j.layers, 0)), ['layer', 'c2c', 'c2p', 'p2c', 'probs']);
  const p2c = at(j.layers, 1).p2c as number[][][];
  assert.equal(p2c.length, r.heads);
  const row = at(at(p2c, 3), 4);
  assert.equal(row.length, r.n);
  assert.equal(Math.fround(at(row, 2)), r.value(1, 3, 'p2c', 4, 2));
  assert.deepEqual(JSON.parse(await toJsonText(r)), j);
  const withText = fixtureResult('text0');
  assert.equal((JSON.parse(await toJsonText(withText)) as { text: string }).text, withText.text);
});

/** Extract the inline script and the JSON payload of a report. */
function parts(html: string) {
  const data = /<script type="application\/json" id="lens-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (data === undefined || script === undefined) throw new Error('the report has no inline payload or script');
  return { data, script };
}

test('HTML report is self-contained: no network references, data decodes to the tensors', async () => {
  const r = fixtureResult('text0');
  const html = await toHtmlReport(r);
  // The one URL allowed is the SVG namespace the figure export writes: a name, never fetched.
  assert.ok(!/https?:\/\//i.test(html.replaceAll('http://www.w3.org/2000/svg', '')), 'no http(s) references');
  // In the page's markup, not in its script's text (the SVG figure writer holds an href="data:…" template).
  assert.ok(!/\b(src|href)\s*=/i.test(html.replace(/<script>[\s\S]*?<\/script>/, '')), 'no src/href attributes');
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  const { data, script } = parts(html);
  new vm.Script(script); // compiles
  const payload = JSON.parse(data) as { meta: { n: number; kinds: string[] }; data: Record<string, string> };
  assert.deepEqual(payload.meta.kinds, ['c2c', 'c2p', 'p2c', 'probs']);
  const buf = Buffer.from(field(payload.data, '1/p2c'), 'base64');
  assert.deepEqual(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4), r.tensor(1, 'p2c'));
});

test('HTML report escapes token text and enforces the size limit', async () => {
  const r = fixtureResult('short5');
  const evil = new ExplainResult(
    r.model,
    r.inputIds,
    r.tokens.map((t, i) => (i === 1 ? { ...t, text: '</script><img src=x>' } : t)),
    r.scale,
    r.layers.map((layer) => ({ layer, ...layerOf(r, layer) })),
    '<b>&</b>',
  );
  const html = await toHtmlReport(evil, { layers: [1], kinds: ['probs'], title: 'a <title>' });
  assert.equal(html.match(/<\/script>/g)!.length, 2);
  assert.ok(!html.includes('<img'));
  assert.ok(!html.includes('<b>&'));
  await assert.rejects(async () => toHtmlReport(r, { maxDataBytes: 100 }), isLensError);
  await assert.rejects(async () => toHtmlReport(r, { layers: [7] }), isLensError);
});

test('HTML report carries the text and offsets the strip lays out, and the panel’s own stylesheet', async () => {
  const r = fixtureResult('text0');
  const html = await toHtmlReport(r, { initial: { layer: 1, head: 2, kind: 'c2p' } });
  const payload = JSON.parse(parts(html).data) as ReportPayload;
  assert.equal(payload.meta.text, r.text);
  assert.deepEqual(
    payload.meta.tokens.map((t) => [t.i, t.start, t.end, t.special]),
    r.tokens.map((t, i) => [i, t.start, t.end, t.special]),
  );
  assert.deepEqual(payload.meta.initial, { layer: 1, head: 2, kind: 'c2p' });
  // The panel's rules for its token strip and heatmap grid, inlined (no link to a file).
  assert.match(html, /#tokens \.tok \{/);
  assert.match(html, /\.heatmap-grid \{/);
  // A result explained from ids has no text: the pieces, spaced, with offsets into that.
  const fromIds = new ExplainResult(
    r.model,
    r.inputIds,
    r.tokens,
    r.scale,
    r.layers.map((layer) => ({ layer, ...layerOf(r, layer) })),
  );
  const meta = (JSON.parse(parts(await toHtmlReport(fromIds, { layers: [1], kinds: ['probs'] })).data) as ReportPayload).meta;
  for (const t of meta.tokens) if (!t.special) assert.equal(meta.text.slice(t.start, t.end), t.text);
});

test('reportPlan checks the panel’s choice of layers and kinds before anything is written', async () => {
  const { reportPlan } = await import('../../src/analysis/export/html-report');
  const { reportDataBytes, formatBytes } = await import('../../src/shared/export-size');
  const { parseWebviewMessage } = await import('../../src/shared/protocol/lens');
  const r = fixtureResult('short5');
  const first = at(r.layers, 0);
  const plan = reportPlan(r, { layers: [first], kinds: ['probs'] });
  assert.deepEqual(plan, { layers: [first], kinds: ['probs'] });
  assert.throws(() => reportPlan(r, { layers: [], kinds: ['probs'] }), /pick at least one layer/);
  assert.throws(
    () => reportPlan(r, { maxDataBytes: 16 }),
    (e: Error) => isLensError(e) && /choose fewer layers or kinds/.test(e.message) && !/--format/.test(e.message),
  );
  assert.equal(reportDataBytes(2, 3, 4, 10), 2 * 3 * 4 * 100 * 4);
  assert.equal(formatBytes(64 * 2 ** 20), '64 MiB');
  const m = parseWebviewMessage({ type: 'export', format: 'html', layers: [0, 2], kinds: ['probs', 'c2p', 'bogus'] });
  assert.deepEqual(m, { type: 'export', format: 'html', layers: [0, 2] }, 'an invalid kinds list is dropped whole');
});
