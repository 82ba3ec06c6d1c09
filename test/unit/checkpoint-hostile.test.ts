// Hostile checkpoint files: lies that parse (a header length one byte short), amplification (zip bombs, stride-0
// views), non-finite weights, pickles built to overflow or to slip past the allow-list, and messages built to
// be enormous. Each must end in one short line naming the file, before anything large is allocated.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadCheckpoint, requireWeight } from '../../src/engine/checkpoint';
import { openModel } from '../../src/engine/model/open-model';
import { firstNonFinite, NonFiniteScan } from '../../src/engine/checkpoint/finite';
import { unpickle } from '../../src/engine/checkpoint/pickle';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { readTorchBin } from '../../src/engine/checkpoint/torch-bin';
import { ZipArchive } from '../../src/engine/checkpoint/zip';
import { isLensError, MAX_MESSAGE_CHARS } from '../../src/engine/errors';
import { assertFiniteLayer } from '../../src/engine/run/finite-outputs';
import type { DType, TensorData } from '../../src/engine/types';
import { encode, fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';
import { PickleWriter, writeMaliciousTorchBin, writeTorchBin, writeZip } from '../../tools/fixtures/write-torch-bin';
import { TINY, copyFixture, f32, rejectsLens, tempDir } from './checkpoint-test-utils';
import { at } from './helpers';

const QUERY = 'encoder.layer.1.attention.self.query_proj.weight';

/** v3_tiny's weights as float32 arrays (names as stored), with `edit` applied. */
async function v3Tensors(edit: (name: string, data: Float32Array) => void = () => undefined) {
  const ck = await loadCheckpoint(TINY('v3'));
  const stored = readSafetensors(path.join(TINY('v3'), 'model.safetensors')).tensors.map((t) => t.name);
  return stored.map((full) => {
    const name = full.replace(/^deberta\./, '');
    const t = ck.weights.get(name)!;
    const data = f32(t).slice();
    edit(name, data);
    return { full, name, shape: t.shape, data };
  });
}

test('a safetensors header length one byte short (still valid JSON) is refused, not read shifted', async () => {
  for (const delta of [-1, +1, -8]) {
    const dir = copyFixture('v3', `hdr${delta}`);
    const file = path.join(dir, 'model.safetensors');
    const bytes = fs.readFileSync(file);
    const n = Number(bytes.readBigUInt64LE(0));
    assert.equal(bytes[8 + n - 1], 0x20, 'the writer pads the header with spaces, so a shorter length still parses');
    bytes.writeBigUInt64LE(BigInt(n + delta), 0);
    fs.writeFileSync(file, bytes);
    await rejectsLens(() => loadCheckpoint(dir), 'corrupt', file);
  }
  const dir = copyFixture('v3', 'hdr-1-msg');
  const file = path.join(dir, 'model.safetensors');
  const bytes = fs.readFileSync(file);
  bytes.writeBigUInt64LE(bytes.readBigUInt64LE(0) - 1n, 0);
  fs.writeFileSync(file, bytes);
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', 'the header length is wrong');
});

test('trailing bytes and gaps between safetensors tensors are refused', () => {
  const dir = tempDir('st-gap');
  const file = path.join(dir, 'model.safetensors');
  writeSafetensors(file, [fromArray('a', [2], Float32Array.of(1, 2)), fromArray('b', [2], Float32Array.of(3, 4))]);
  assert.equal(readSafetensors(file).tensors.length, 2);
  fs.appendFileSync(file, Buffer.alloc(4));
  assert.throws(() => readSafetensors(file), /tensors cover 16 bytes but the data section .* is 20/);
  const header = JSON.stringify({
    a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
    b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] },
  });
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  fs.writeFileSync(file, Buffer.concat([len, Buffer.from(header), Buffer.alloc(12)]));
  assert.throws(() => readSafetensors(file), /tensor 'b' starts at data byte 8, but the tensors before it end at 4/);
});

test('NaN and ±Inf weights: found while hashing, named by requireWeight (f32, f16, bf16)', async () => {
  for (const [dtype, value, shown] of [
    ['F32', NaN, 'NaN'],
    ['F16', Infinity, 'Infinity'],
    ['BF16', -Infinity, '-Infinity'],
  ] as const) {
    const tensors = await v3Tensors((name, d) => {
      if (name === QUERY) d[77] = value;
    });
    const dir = copyFixture('v3', `nan-${dtype}`, false);
    writeSafetensors(
      path.join(dir, 'model.safetensors'),
      tensors.map((t) => fromArray(t.full, t.shape, t.data, dtype)),
    );
    const ck = await loadCheckpoint(dir);
    assert.deepEqual([...ck.nonFinite!.keys()], [QUERY]);
    const t = ck.weights.get(QUERY)!;
    await rejectsLens(() => requireWeight(ck, QUERY, t.shape), 'corrupt', 'model.safetensors', QUERY, `holds ${shown} (element 77)`);
    requireWeight(ck, 'encoder.layer.0.attention.self.query_proj.weight', t.shape);
  }
});

test('NaN findings are remembered with the file hash: a new process neither re-reads nor re-scans an unchanged file', async () => {
  const tensors = await v3Tensors((name, d) => {
    if (name === QUERY) d[3] = NaN;
  });
  const dir = copyFixture('v3', 'nan-remembered', false);
  writeSafetensors(
    path.join(dir, 'model.safetensors'),
    tensors.map((t) => fromArray(t.full, t.shape, t.data)),
  );
  const settled = new Date('2024-01-02T03:04:05Z'); // hash records are kept only for files whose mtime has settled
  for (const f of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, f), settled, settled);
  const store = tempDir('nan-store');
  assert.deepEqual([...(await loadCheckpoint(dir, { hashStore: store })).nonFinite!.keys()], [QUERY]);
  const child = `
    const fs = require('node:fs');
    let reads = 0;
    const open = fs.createReadStream;
    fs.createReadStream = (...a) => (reads++, open(...a));
    require(${JSON.stringify(path.resolve(__dirname, '../../src/engine/checkpoint/index.js'))})
      .loadCheckpoint(process.argv[1], { hashStore: process.argv[2] })
      .then((ck) => process.stdout.write(JSON.stringify({ reads, nonFinite: [...ck.nonFinite] })));`;
  const out = spawnSync(process.execPath, ['-e', child, dir, store], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out.stdout), { reads: 0, nonFinite: [[QUERY, { index: 3, value: 'NaN' }]] }, out.stderr);
});

test('NaN in a weight that is read (a deflated .bin storage) fails on read, naming the tensor', async () => {
  const tensors = await v3Tensors((name, d) => {
    if (name === QUERY) d[5] = NaN;
  });
  const dir = copyFixture('v3', 'nan-bin', false);
  writeTorchBin(path.join(dir, 'pytorch_model.bin'), new Map(tensors.map((t) => [t.full, { shape: t.shape, data: t.data }])), {
    deflate: true,
  });
  const ck = await loadCheckpoint(dir);
  await rejectsLens(() => ck.weights.get(QUERY)!.read(), 'corrupt', 'pytorch_model.bin', QUERY, 'NaN (element 5)');
  assert.equal(ck.weights.get('encoder.layer.0.attention.self.query_proj.weight')!.read().length > 0, true);
});

test('the streaming NaN scan gives the same answer for any chunking, unaligned offsets and shared storages', () => {
  const parts: Array<{ name: string; dtype: DType; values: number[] }> = [
    { name: 'a', dtype: 'float32', values: [1, 2, 3] },
    { name: 'b', dtype: 'float16', values: [1, Infinity, 3] },
    { name: 'c', dtype: 'bfloat16', values: [1, 2, 3, 4] },
    { name: 'd', dtype: 'float32', values: [0, 1, 2, -Infinity, NaN] },
  ];
  const bytes: number[] = [7, 7, 7]; // an odd start, so nothing is aligned
  const tensors: TensorData[] = [];
  const code = { float32: 'F32', float16: 'F16', bfloat16: 'BF16' } as const;
  for (const p of parts) {
    const enc = encode(Float32Array.from(p.values), code[p.dtype]);
    tensors.push({
      name: p.name,
      dtype: p.dtype,
      shape: [p.values.length],
      byteLength: enc.length,
      file: 'f',
      offset: bytes.length,
      read: () => enc,
    });
    bytes.push(...enc);
  }
  // A view of d's storage starting at its second element (as torch views share a storage).
  tensors.push({
    name: 'd_view',
    dtype: 'float32',
    shape: [4],
    byteLength: 16,
    file: 'f',
    offset: at(tensors, 3).offset! + 4,
    read: () => new Uint8Array(0),
  });
  const buf = Uint8Array.from(bytes);
  for (const size of [1, 2, 3, 5, 7, 64]) {
    const scan = new NonFiniteScan(['f'], tensors);
    for (let at = 0; at < buf.length; at += size) scan.feed(0, buf.subarray(at, at + size), at);
    assert.deepEqual(
      Object.fromEntries(scan.found),
      {
        b: { index: 1, value: 'Infinity' },
        d: { index: 3, value: '-Infinity' },
        d_view: { index: 2, value: '-Infinity' },
      },
      `chunk size ${size}`,
    );
  }
  assert.equal(firstNonFinite(encode(Float32Array.of(1, 2, NaN), 'F32'), 'float32'), 2);
  assert.equal(firstNonFinite(encode(Float32Array.of(65504, -65504), 'F16'), 'float16'), -1);
});

test('a zip bomb: data.pkl declared at 1 GiB from a small archive is refused before inflating', () => {
  const dir = tempDir('bomb');
  const file = path.join(dir, 'pytorch_model.bin');
  // 96 MiB of zeros deflates to ~100 KB; the limit for that is 64 MiB + 32 × compressed.
  writeZip(file, [{ name: 'archive/data.pkl', data: new Uint8Array(96 * 2 ** 20), deflate: true }], false);
  assert.ok(fs.statSync(file).size < 200_000);
  const before = process.memoryUsage().rss;
  assert.throws(
    () => readTorchBin(file),
    (e: Error) => {
      assert.match(e.message, /entry archive\/data\.pkl claims to inflate from \d+ to 100663296 bytes, over the limit of \d+/);
      return true;
    },
  );
  assert.ok(process.memoryUsage().rss - before < 50 * 2 ** 20, 'nothing the size of the declared entry was allocated');
});

test('an entry that inflates past the size it declares stops at that size', () => {
  const dir = tempDir('liar');
  const file = path.join(dir, 'x.zip');
  writeZip(file, [{ name: 'archive/data.pkl', data: new Uint8Array(1_000_000), deflate: true }], false);
  const zip = new ZipArchive(file, fs.statSync(file).size);
  const entry = { ...zip.entries.get('archive/data.pkl')!, size: 1000 };
  assert.throws(() => zip.readEntry(entry), /inflates to more than the 1000 bytes it declares/);
});

/** A torch-style zip holding one tensor view described by `shape`/`stride` over a storage of `numel` floats. */
function writeView(file: string, numel: number, shape: number[], stride: number[], storageClass = 'FloatStorage'): void {
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d); // EMPTY_DICT
  p.put();
  p.unicode('embeddings.word_embeddings.weight');
  p.rebuildTensor(storageClass, '0', numel, 0, shape, stride);
  p.op(0x73); // SETITEM
  p.op(0x2e);
  writeZip(
    file,
    [
      { name: 'archive/data.pkl', data: p.bytes() },
      { name: 'archive/data/0', data: new Uint8Array(Float32Array.from({ length: numel }, (_, i) => i).buffer) },
    ],
    false,
  );
}

test('stride-0 and overlapping views with more elements than their storage are refused with the numbers', () => {
  const dir = tempDir('expand');
  const file = path.join(dir, 'pytorch_model.bin');
  writeView(file, 32, [10_000_000, 32], [0, 1]);
  assert.ok(fs.statSync(file).size < 10_000);
  assert.throws(
    () => readTorchBin(file),
    (e: Error) => {
      assert.match(
        e.message,
        /tensor 'embeddings\.word_embeddings\.weight' has shape \[10000000, 32\] \(320000000 elements\) but its storage holds only 32/,
      );
      return true;
    },
  );
  writeView(file, 64, [10, 32], [1, 1]); // overlapping rows: 320 elements over 64 stored
  assert.throws(() => readTorchBin(file), /320 elements\) but its storage holds only 64/);
  writeView(file, 64, [2, 32], [32, 1]); // a plain view is fine
  assert.deepEqual(at(readTorchBin(file).tensors, 0).shape, [2, 32]);
});

test('a view spanning far more of its storage than it holds reads only its own elements', () => {
  const dir = tempDir('sparse');
  const file = path.join(dir, 'pytorch_model.bin');
  writeView(file, 300_000, [2, 3], [150_000, 1]);
  const t = at(readTorchBin(file).tensors, 0);
  assert.equal(t.file, undefined);
  assert.deepEqual([...new Float32Array(t.read().slice().buffer)], [0, 1, 2, 150_000, 150_001, 150_002]);
  writeView(file, 64, [4, 2], [1, 8]); // a transposed view within a small span: read as one range
  assert.deepEqual([...new Float32Array(at(readTorchBin(file).tensors, 0).read().slice().buffer)], [0, 8, 1, 9, 2, 10, 3, 11]);
});

test('a pickle APPENDS of 300k items does not overflow the stack', () => {
  const ops: number[] = [0x80, 2, 0x5d, 0x28];
  for (let k = 0; k < 300_000; k++) ops.push(0x4b, k & 0xff);
  ops.push(0x65, 0x2e);
  const hooks = {
    findClass: () => {
      throw new Error('no');
    },
    reduce: () => null,
    persistentLoad: () => null,
    build: () => undefined,
  };
  const list = unpickle(Uint8Array.from(ops), 'x.pkl', hooks) as number[];
  assert.equal(list.length, 300_000);
  assert.equal(list[299_999], 299_999 & 0xff);
});

test('allow-list names that exist on every object (__proto__, toString, constructor) are refused', async () => {
  for (const name of ['__proto__', 'toString', 'constructor', 'hasOwnProperty']) {
    const dir = tempDir('proto');
    const file = path.join(dir, 'pytorch_model.bin');
    writeMaliciousTorchBin(file, 'torch', name);
    await rejectsLens(() => readTorchBin(file), 'unsafe', `torch.${name}`);
    writeView(file, 4, [4], [1], name);
    await rejectsLens(() => readTorchBin(file), 'unsafe', `torch.${name}`);
  }
});

test('a safetensors dtype named like an Object property is refused as unsupported', async () => {
  const dir = tempDir('st-proto');
  const file = path.join(dir, 'model.safetensors');
  for (const dtype of ['toString', '__proto__', 'constructor']) {
    const header = JSON.stringify({ a: { dtype, shape: [1], data_offsets: [0, 4] } });
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(header.length));
    fs.writeFileSync(file, Buffer.concat([len, Buffer.from(header), Buffer.alloc(4)]));
    await rejectsLens(() => readSafetensors(file), 'unsupported', `has dtype ${dtype}`);
  }
});

test('a 10,000-dimension shape and a JSON error quoting newlines give one short line', async () => {
  const dir = tempDir('huge-msg');
  const file = path.join(dir, 'model.safetensors');
  const header = JSON.stringify({ a: { dtype: 'F32', shape: new Array(10_000).fill(1), data_offsets: [0, 8] } });
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  fs.writeFileSync(file, Buffer.concat([len, Buffer.from(header), Buffer.alloc(8)]));
  let message = '';
  try {
    readSafetensors(file);
  } catch (e) {
    message = (e as Error).message;
  }
  assert.match(message, /\[1, 1, 1, 1, 1, 1, … 10000 dimensions\] needs 4/);
  assert.ok(message.length <= MAX_MESSAGE_CHARS, `${message.length} characters`);

  const cfgDir = copyFixture('v3', 'newline-json');
  fs.writeFileSync(path.join(cfgDir, 'config.json'), '{\n  "model_type": "deberta-v2",\n  "vocab_size": \n}\n');
  await rejectsLens(() => loadCheckpoint(cfgDir), 'corrupt', 'config.json', 'not valid JSON');
  const long = 'x'.repeat(50_000);
  fs.writeFileSync(path.join(cfgDir, 'config.json'), `{"model_type": "deberta-v2", "hidden_act": "${long}"}`);
  await rejectsLens(() => loadCheckpoint(cfgDir), 'unsupported', 'config.json', 'characters cut');
});

test('finite weights that overflow float32 in the run are refused, never returned as attention', async () => {
  const tensors = await v3Tensors((name, d) => {
    if (name === 'encoder.layer.0.attention.self.query_proj.weight') d.fill(3e38);
  });
  const dir = copyFixture('v3', 'overflow', false);
  for (const f of ['spm.model', 'special_tokens_map.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(TINY('v3'), f), path.join(dir, f));
  writeSafetensors(
    path.join(dir, 'model.safetensors'),
    tensors.map((t) => fromArray(t.full, t.shape, t.data)),
  );
  const model = await openModel(dir, { cacheDir: tempDir('overflow-cache'), executionProvider: 'cpu', threads: 1 });
  try {
    // Refused by explain, from the forward pass's outputs, before any layer's matrices are computed.
    await rejectsLens(
      () => model.explain({ text: 'hello world' }),
      'corrupt',
      dir,
      'the output of layer 0 (the input of layer 1) holds NaN or Infinity',
    );
    await rejectsLens(
      () => model.explain({ text: 'hello world', layers: [1] }),
      'corrupt',
      'the embeddings or layer 0 (the input of layer 1)',
    );
    await rejectsLens(() => model.explain({ text: 'hello world', layers: [0] }), 'corrupt', 'the output of layer 0 holds NaN or Infinity');
  } finally {
    await model.dispose();
  }
  // A layer computed on demand is checked too.
  const probs = new Float32Array([0.5, 0.5, NaN, 1]);
  assert.throws(
    () => assertFiniteLayer(dir, { layer: 3, c2c: probs, probs }),
    (e: unknown) => isLensError(e) && e.code === 'corrupt' && /the attention of layer 3 holds NaN or Infinity/.test(e.message),
  );
  assert.doesNotThrow(() => assertFiniteLayer(dir, { layer: 3, c2c: probs, probs: new Float32Array([0.5, 0.5, 0, 1]) }));
});
