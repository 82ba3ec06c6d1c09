import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCheckpoint, requireWeight, type Checkpoint } from '../../src/engine/checkpoint';
import { readTorchBin } from '../../src/engine/checkpoint/torch-bin';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { isLensError } from '../../src/engine/errors';
import { fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';
import {
  PickleWriter,
  writeMaliciousTorchBin,
  writeTorchBin,
  writeZip,
  type TorchTensor,
  type WriteTorchBinOptions,
} from '../../tools/fixtures/write-torch-bin';
import { TINY, copyFixture, f32, rejectsLens, tempDir } from './checkpoint-test-utils';
import { DATA, field } from './helpers';

const REAL = path.join(DATA, 'checkpoints', 'torch-1.13');
const PWNED = '/tmp/deberta-lens-pwned';

/** The fixture's tensors, with their original `deberta.` prefix, as float32 arrays. */
async function tensorsOf(v: 'v1' | 'v3'): Promise<{ ck: Checkpoint; tensors: Map<string, TorchTensor> }> {
  const ck = await loadCheckpoint(TINY(v));
  const prefixed = new Set(readSafetensors(path.join(TINY(v), 'model.safetensors')).tensors.map((t) => t.name));
  const tensors = new Map<string, TorchTensor>();
  for (const [n, t] of ck.weights) tensors.set(prefixed.has(`deberta.${n}`) ? `deberta.${n}` : n, { shape: t.shape, data: f32(t) });
  return { ck, tensors };
}

async function binTwin(v: 'v1' | 'v3', opts: WriteTorchBinOptions, name = 'twin'): Promise<{ twin: Checkpoint; ref: Checkpoint }> {
  const { ck, tensors } = await tensorsOf(v);
  const dir = copyFixture(v, name, false);
  writeTorchBin(path.join(dir, 'pytorch_model.bin'), tensors, opts);
  return { twin: await loadCheckpoint(dir), ref: ck };
}

function assertSameTensors(a: Checkpoint, b: Checkpoint): void {
  assert.deepEqual([...a.weights.keys()].sort(), [...b.weights.keys()].sort());
  for (const [n, t] of b.weights) {
    const u = a.weights.get(n)!;
    assert.deepEqual(u.shape, t.shape, n);
    assert.equal(u.dtype, t.dtype, n);
    assert.deepEqual(Buffer.from(u.read()), Buffer.from(t.read()), n);
  }
}

test('.bin twin of v3_tiny (torch.save layout) loads to identical tensors, referenced in place', async () => {
  const { twin, ref } = await binTwin('v3', { archiveName: 'pytorch_model' });
  assertSameTensors(twin, ref);
  assert.deepEqual(twin.spec, ref.spec);
  assert.equal(twin.weightFiles[0], path.join(twin.dir, 'pytorch_model.bin'));
  const w = twin.weights.get('encoder.layer.0.attention.self.query_proj.weight')!;
  assert.equal(w.file, twin.weightFiles[0]);
  assert.equal(w.offset! % 64, 0); // torch aligns storages to 64 bytes
  const raw = fs.readFileSync(w.file).subarray(w.offset, w.offset! + w.byteLength);
  assert.deepEqual(Buffer.from(raw), Buffer.from(w.read()));
});

test('.bin variants: one shared storage with offsets, strided views, deflate, zip64, int64 buffers', async () => {
  const transposed = new Set(['deberta.encoder.rel_embeddings.weight', 'deberta.embeddings.word_embeddings.weight']);
  const int64 = new Map([['deberta.embeddings.position_ids', { shape: [1, 32], values: [...Array(32).keys()] }]]);
  const { twin, ref } = await binTwin('v3', { singleStorage: true, transposed, int64 }, 'shared');
  assertSameTensors(twin, ref);
  const rel = twin.weights.get('encoder.rel_embeddings.weight')!;
  assert.equal(rel.file, undefined); // a strided view is copied on read, not referenced
  const q = twin.weights.get('encoder.layer.1.attention.self.query_proj.weight')!;
  assert.ok(q.offset! > 0 && q.file !== undefined);
  assert.ok(!twin.weights.has('embeddings.position_ids'));
  assert.equal(twin.skipped.get('embeddings.position_ids')?.dtype, 'int64');
  await rejectsLens(() => requireWeight(twin, 'embeddings.position_ids', [1, 32]), 'unsupported', 'pytorch_model.bin', 'int64');

  const deflated = await binTwin('v1', { deflate: true, transposed: new Set(['deberta.encoder.rel_embeddings.weight']) }, 'deflate');
  assertSameTensors(deflated.twin, deflated.ref);
  assert.equal(deflated.twin.weights.get('embeddings.word_embeddings.weight')!.file, undefined);

  const z64 = await binTwin('v1', { zip64: true }, 'zip64');
  assertSameTensors(z64.twin, z64.ref);
});

test('a checkpoint saved by real torch 1.13: views, offsets, f16, bf16, Parameter, int64 buffer', () => {
  const file = path.join(REAL, 'state_dict.bin');
  const expected = JSON.parse(fs.readFileSync(path.join(REAL, 'expected.json'), 'utf8')).tensors as Record<
    string,
    { dtype: string; shape: number[]; values: number[] }
  >;
  const { tensors, skipped } = readTorchBin(file);
  assert.deepEqual(tensors.map((t) => t.name).sort(), ['bf', 'c.bias', 'deberta.a.weight', 'deberta.b.weight', 'h', 'p']);
  assert.deepEqual(
    skipped.map((s) => [s.name, s.dtype, s.shape]),
    [['embeddings.position_ids', 'int64', [1, 6]]],
  );
  for (const t of tensors) {
    const e = field(expected, t.name);
    assert.deepEqual(t.shape, e.shape, t.name);
    const bytes = t.read();
    const u16 = new Uint16Array(bytes.slice().buffer);
    const values =
      t.dtype === 'float32'
        ? Array.from(new Float32Array(bytes.slice().buffer))
        : t.dtype === 'bfloat16'
          ? Array.from(new Float32Array(Uint32Array.from(u16, (x) => x << 16).buffer))
          : Array.from(u16, (x) => (x & 0x8000 ? -1 : 1) * (1 + (x & 1023) / 1024) * 2 ** (((x >> 10) & 31) - 15));
    assert.deepEqual(values, e.values, t.name); // f16 values here are normal numbers, so the simple decode is exact
  }
  assert.equal(tensors.find((t) => t.name === 'deberta.b.weight')!.file, undefined); // transposed view
  assert.ok(tensors.find((t) => t.name === 'c.bias')!.offset! % 64 === 8); // storage offset 2 × 4 bytes
});

test('legacy (non-zip) torch files are refused with a hint to re-save', async () => {
  await rejectsLens(() => readTorchBin(path.join(REAL, 'legacy.bin')), 'unsupported', 'legacy.bin', 're-save');
});

test('pickles that call anything but tensor rebuilders are refused, and nothing runs', async () => {
  fs.rmSync(PWNED, { force: true });
  // Real torch.save of an object whose __reduce__ is os.system (posix.system on Linux).
  await rejectsLens(() => readTorchBin(path.join(REAL, 'exploit.bin')), 'unsafe', 'exploit.bin', 'refusing to load', 'posix.system');
  const dir = copyFixture('v3', 'evil', false);
  const file = path.join(dir, 'pytorch_model.bin');
  writeMaliciousTorchBin(file);
  await rejectsLens(() => loadCheckpoint(dir), 'unsafe', file, 'refusing to load: the pickle references os.system, which is not a tensor');
  writeMaliciousTorchBin(file, 'builtins', 'eval');
  await rejectsLens(() => loadCheckpoint(dir), 'unsafe', 'builtins.eval');
  // Instantiating opcodes (INST/OBJ/NEWOBJ) never appear in a state dict.
  const p = new PickleWriter();
  p.proto();
  p.op(0x69, ...Buffer.from('os\nsystem\n')); // INST
  p.op(0x2e);
  writeZip(file, [{ name: 'archive/data.pkl', data: p.bytes() }], false);
  await rejectsLens(() => loadCheckpoint(dir), 'unsafe', file, 'opcode 0x69');
  assert.ok(!fs.existsSync(PWNED));
});

test('safetensors is preferred over pytorch_model.bin when both exist', async () => {
  const dir = copyFixture('v3', 'both');
  const { tensors } = await tensorsOf('v3');
  for (const t of tensors.values()) t.data = t.data.map((x) => x + 1);
  writeTorchBin(path.join(dir, 'pytorch_model.bin'), tensors);
  const ck = await loadCheckpoint(dir);
  assert.deepEqual(ck.weightFiles, [path.join(dir, 'model.safetensors')]);
  assertSameTensors(ck, await loadCheckpoint(TINY('v3')));
});

test('sharded pytorch_model.bin.index.json', async () => {
  const { ck: ref, tensors } = await tensorsOf('v1');
  const dir = copyFixture('v1', 'binshards', false);
  const names = [...tensors.keys()];
  const weightMap: Record<string, string> = {};
  for (const [k, part] of [names.slice(0, 10), names.slice(10)].entries()) {
    const file = `pytorch_model-0000${k + 1}-of-00002.bin`;
    writeTorchBin(path.join(dir, file), new Map(part.map((n) => [n, tensors.get(n)!])));
    for (const n of part) weightMap[n] = file;
  }
  fs.writeFileSync(path.join(dir, 'pytorch_model.bin.index.json'), JSON.stringify({ weight_map: weightMap }));
  const ck = await loadCheckpoint(dir);
  assert.equal(ck.weightFiles.length, 2);
  assertSameTensors(ck, ref);
});

test('bad folders and configs: each a one-line LensError naming the path', async () => {
  const root = tempDir('bad');
  const missing = path.join(root, 'nope');
  await rejectsLens(() => loadCheckpoint(missing), 'not-found', missing);
  const asFile = path.join(root, 'file.txt');
  fs.writeFileSync(asFile, 'x');
  await rejectsLens(() => loadCheckpoint(asFile), 'invalid-input', asFile, 'folder');

  const noConfig = path.join(root, 'noconfig');
  fs.mkdirSync(noConfig);
  fs.copyFileSync(path.join(TINY('v3'), 'model.safetensors'), path.join(noConfig, 'model.safetensors'));
  await rejectsLens(() => loadCheckpoint(noConfig), 'not-found', path.join(noConfig, 'config.json'));

  const dir = copyFixture('v3', 'cfg');
  const cfg = path.join(dir, 'config.json');
  fs.writeFileSync(cfg, '{"model_type": "deberta-v2",');
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', cfg, 'JSON');
  fs.writeFileSync(cfg, JSON.stringify({ model_type: 'roberta' }));
  await rejectsLens(() => loadCheckpoint(dir), 'unsupported', cfg, '"roberta"', '"deberta-v2"');

  const noWeights = copyFixture('v3', 'noweights', false);
  await rejectsLens(() => loadCheckpoint(noWeights), 'not-found', noWeights, 'model.safetensors', 'pytorch_model.bin');
});

/** Writes `bytes` as the folder's model.safetensors and expects a corrupt-file error naming it. */
async function expectCorruptSafetensors(dir: string, bytes: Buffer, ...parts: string[]): Promise<void> {
  const file = path.join(dir, 'model.safetensors');
  fs.writeFileSync(file, bytes);
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', file, ...parts);
}

function safetensorsWithHeader(header: unknown, dataBytes: number): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.alloc(dataBytes)]);
}

test('truncated and garbled safetensors are refused with the file named', async () => {
  const dir = copyFixture('v3', 'garbled', false);
  const good = fs.readFileSync(path.join(TINY('v3'), 'model.safetensors'));
  await expectCorruptSafetensors(dir, good.subarray(0, good.length - 100), 'past the end');
  await expectCorruptSafetensors(dir, good.subarray(0, 100), 'header length');
  await expectCorruptSafetensors(dir, good.subarray(0, 4), '4 bytes');
  const huge = Buffer.from(good);
  huge.writeBigUInt64LE(1n << 60n, 0);
  await expectCorruptSafetensors(dir, huge, 'header length');
  const garbled = Buffer.from(good);
  garbled.write('}}}}', 8);
  await expectCorruptSafetensors(dir, garbled, 'not JSON');
  const t = (offsets: unknown, dtype = 'F32', shape = [4]) => ({ a: { dtype, shape, data_offsets: offsets } });
  await expectCorruptSafetensors(dir, safetensorsWithHeader(t([0, 16]), 8), 'past the end');
  await expectCorruptSafetensors(dir, safetensorsWithHeader(t([-16, 0]), 16), 'data_offsets');
  await expectCorruptSafetensors(dir, safetensorsWithHeader(t([0, 12]), 16), 'needs 16');
  await expectCorruptSafetensors(dir, safetensorsWithHeader(t([0, 16], 'F32', [-4]), 16), 'shape');
  await expectCorruptSafetensors(
    dir,
    safetensorsWithHeader({ ...t([0, 16]), b: { dtype: 'F32', shape: [4], data_offsets: [8, 24] } }, 24),
    'overlap',
  );
  await expectCorruptSafetensors(dir, safetensorsWithHeader([1, 2], 0), 'JSON object');
});

test('safetensors dtypes: F64 refused naming the tensor; integer buffers skipped', async () => {
  const dir = copyFixture('v3', 'dtypes', false);
  const file = path.join(dir, 'model.safetensors');
  fs.writeFileSync(file, safetensorsWithHeader({ 'deberta.w': { dtype: 'F64', shape: [2], data_offsets: [0, 16] } }, 16));
  await rejectsLens(() => loadCheckpoint(dir), 'unsupported', file, "'deberta.w'", 'F64');
  fs.writeFileSync(
    file,
    safetensorsWithHeader(
      {
        'deberta.embeddings.position_ids': { dtype: 'I64', shape: [1, 2], data_offsets: [0, 16] },
        'deberta.w': { dtype: 'F32', shape: [2], data_offsets: [16, 24] },
      },
      24,
    ),
  );
  const ck = await loadCheckpoint(dir);
  assert.deepEqual([...ck.weights.keys()], ['w']);
  assert.equal(ck.skipped.get('embeddings.position_ids')?.dtype, 'I64');
  await rejectsLens(() => requireWeight(ck, 'embeddings.position_ids', [1, 2]), 'unsupported', file, 'I64');
});

test('prefix collisions are refused rather than silently picking one', async () => {
  const dir = copyFixture('v3', 'collide', false);
  const x = new Float32Array([1, 2]);
  writeSafetensors(path.join(dir, 'model.safetensors'), [fromArray('deberta.w', [2], x), fromArray('w', [2], x)]);
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', "'deberta.w'", "'w'");
});

test('a weight file truncated after loading fails on read() with the file named', async () => {
  const dir = copyFixture('v3', 'shrink');
  const ck = await loadCheckpoint(dir);
  const file = path.join(dir, 'model.safetensors');
  fs.truncateSync(file, 30000);
  const t = ck.weights.get('encoder.rel_embeddings.weight')!;
  await rejectsLens(() => t.read(), 'corrupt', file, 'truncated');
});

// Deterministic damage: every prefix cut and many byte flips of a .bin must end in a LensError or a clean load.
test('damaged pytorch_model.bin never crashes or hangs (cuts and byte flips)', async () => {
  const { tensors } = await tensorsOf('v1');
  const dir = tempDir('fuzz');
  const file = path.join(dir, 'pytorch_model.bin');
  writeTorchBin(file, tensors);
  const good = fs.readFileSync(file);
  const zip = readTorchBin(file);
  assert.ok(zip.tensors.length > 0);
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const cases: Buffer[] = [];
  for (let cut = 0; cut < good.length; cut += Math.max(1, Math.floor(good.length / 60))) cases.push(good.subarray(0, cut));
  // Flips inside the pickle (at the front) and the central directory (at the end) exercise the parsers.
  const pklEnd = 64 + 6400;
  for (let k = 0; k < 150; k++) {
    const b = Buffer.from(good);
    const at = k % 2 ? rnd(pklEnd) : good.length - 1 - rnd(Math.min(good.length, 3000));
    b[at] = rnd(256);
    cases.push(b);
  }
  let refused = 0;
  for (const bytes of cases) {
    fs.writeFileSync(file, bytes);
    try {
      for (const t of readTorchBin(file).tensors) t.read();
    } catch (e) {
      assert.ok(isLensError(e), `not a LensError: ${e instanceof Error ? e.stack : String(e)}`);
      assert.ok(e.message.includes(file), e.message);
      refused++;
    }
  }
  assert.ok(refused > 60, `only ${refused} of ${cases.length} damaged files were refused`);
});

test('damaged safetensors never crash (cuts and header byte flips)', () => {
  const good = fs.readFileSync(path.join(TINY('v2'), 'model.safetensors'));
  const dir = tempDir('fuzz-st');
  const file = path.join(dir, 'model.safetensors');
  let seed = 99;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const headerEnd = 8 + Number(good.readBigUInt64LE(0));
  for (let k = 0; k < 120; k++) {
    const b = k % 4 === 0 ? good.subarray(0, rnd(good.length)) : Buffer.from(good);
    if (k % 4) b[rnd(headerEnd)] = rnd(256);
    fs.writeFileSync(file, b);
    try {
      readSafetensors(file);
    } catch (e) {
      assert.ok(isLensError(e), `not a LensError: ${e instanceof Error ? e.stack : String(e)}`);
      assert.ok(e.message.includes(file));
    }
  }
});
