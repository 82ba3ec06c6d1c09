import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadCheckpoint, requireWeight } from '../../src/engine/checkpoint';
import { fromArray, writeSafetensors, encode, type SafetensorsDType } from '../../tools/fixtures/write-safetensors';
import { TINY, copyFixture, f32, hubSnapshot, rejectsLens, tempDir } from './checkpoint-test-utils';
import { at } from './helpers';

test('v3_tiny: spec per deberta-spec §2, prefix stripped, extras kept, lazy file references', async () => {
  const ck = await loadCheckpoint(TINY('v3'));
  assert.equal(ck.dir, path.resolve(TINY('v3')));
  assert.equal(ck.name, 'v3_tiny');
  const s = ck.spec;
  assert.equal(s.modelType, 'deberta-v2');
  assert.deepEqual(
    [s.hiddenSize, s.numHeads, s.headDim, s.allHeadSize, s.numLayers, s.intermediateSize, s.vocabSize],
    [32, 4, 8, 32, 2, 64, 160],
  );
  assert.deepEqual([s.maxRelativePositions, s.positionBuckets, s.attSpan], [32, 16, 16]); // M = -1 → P = 32
  assert.deepEqual([...s.posAttType].sort(), ['c2p', 'p2c']);
  assert.equal(s.scaleFactor, 3);
  assert.deepEqual([s.shareAttKey, s.normRelEbd, s.positionBiasedInput, s.relativeAttention], [true, true, false, true]);
  assert.equal(s.typeVocabSize, 0);
  assert.equal(s.layerNormEps, 1e-7);

  assert.ok(ck.weights.has('encoder.layer.0.attention.self.query_proj.weight'));
  assert.ok(![...ck.weights.keys()].some((k) => k.startsWith('deberta.')));
  // Unused extras stay available: the LM head and the absolute table of a position_biased_input=false model.
  assert.ok(ck.weights.has('lm_predictions.lm_head.dense.weight'));
  assert.ok(ck.weights.has('embeddings.position_embeddings.weight'));
  const rel = requireWeight(ck, 'encoder.rel_embeddings.weight', [2 * s.attSpan, s.hiddenSize]);
  assert.equal(rel.name, 'encoder.rel_embeddings.weight');
  assert.equal(rel.byteLength, 32 * 32 * 4);
  assert.equal(rel.file, path.join(ck.dir, 'model.safetensors'));
  // The file reference is where the bytes really are.
  const raw = fs.readFileSync(rel.file).subarray(rel.offset, rel.offset! + rel.byteLength);
  assert.deepEqual(Buffer.from(rel.read()), raw);
  assert.deepEqual(ck.weightFiles, [path.join(ck.dir, 'model.safetensors')]);
});

test('v2_tiny and v1_tiny: specs per deberta-spec §2', async () => {
  const v2 = await loadCheckpoint(TINY('v2'));
  const a = v2.spec;
  assert.deepEqual([a.hiddenSize, a.numHeads, a.headDim, a.maxRelativePositions, a.positionBuckets, a.attSpan], [48, 4, 12, 12, 0, 12]);
  assert.deepEqual(
    [a.convKernelSize, a.convAct, a.convGroups, a.shareAttKey, a.normRelEbd, a.typeVocabSize],
    [3, 'gelu', 1, false, false, 2],
  );
  assert.equal(a.scaleFactor, 3);
  assert.ok(v2.weights.has('encoder.conv.conv.weight'));
  requireWeight(v2, 'encoder.rel_embeddings.weight', [24, 48]);

  const v1 = await loadCheckpoint(TINY('v1'));
  const b = v1.spec;
  assert.equal(b.modelType, 'deberta');
  assert.deepEqual([b.hiddenSize, b.numHeads, b.headDim, b.maxRelativePositions, b.positionBuckets, b.attSpan], [32, 4, 8, 6, 0, 6]);
  assert.equal(b.scaleFactor, 3);
  assert.ok(b.positionBiasedInput);
  requireWeight(v1, 'encoder.layer.1.attention.self.in_proj.weight', [96, 32]);
  requireWeight(v1, 'encoder.rel_embeddings.weight', [12, 32]);
  assert.ok(v1.weights.has('lm_predictions.lm_head.bias'));
});

test('hash is sha256 of `sha256sum config.json model.safetensors`, stable, and changes with the weights', async () => {
  const dir = copyFixture('v2');
  const sum = (f: string) =>
    createHash('sha256')
      .update(fs.readFileSync(path.join(dir, f)))
      .digest('hex');
  // What `cd DIR && sha256sum config.json model.safetensors | sha256sum` prints.
  const listing = ['config.json', 'model.safetensors'].map((f) => `${sum(f)}  ${f}\n`).join('');
  const expect = createHash('sha256').update(listing).digest('hex');
  const a = await loadCheckpoint(dir);
  assert.equal(a.hash, expect);
  assert.deepEqual(
    a.hashed.map((h) => h.sha256),
    [sum('config.json'), sum('model.safetensors')],
  );
  assert.equal((await loadCheckpoint(dir)).hash, expect);
  const shapeOnly = await loadCheckpoint(dir, { hash: false }); // what `info` and Select Model need: no byte read
  assert.deepEqual([shapeOnly.hash, shapeOnly.hashed.length, shapeOnly.weights.size], ['', 0, a.weights.size]);
  // Same size, new bytes, and the old mtime put back → a new hash (records are keyed on the inode's ctime too).
  const file = path.join(dir, 'model.safetensors');
  const { atime, mtime } = fs.statSync(file);
  const bytes = fs.readFileSync(file);
  bytes[bytes.length - 1] = at(bytes, bytes.length - 1) ^ 0xff;
  fs.writeFileSync(file, bytes);
  fs.utimesSync(file, atime, mtime);
  assert.notEqual((await loadCheckpoint(dir)).hash, expect);
});

test('requireWeight: missing tensor and shape mismatch name the file, the tensor and both shapes', async () => {
  const ck = await loadCheckpoint(TINY('v3'));
  const file = path.join(ck.dir, 'model.safetensors');
  await rejectsLens(
    () => requireWeight(ck, 'encoder.rel_embeddings.weight', [64, 32]),
    'invalid-input',
    file,
    "'encoder.rel_embeddings.weight'",
    '[32, 32]',
    '[64, 32]',
  );
  await rejectsLens(() => requireWeight(ck, 'encoder.layer.0.attention.self.query_proj.bias', [32, 1]), 'invalid-input', '[32]', '[32, 1]');
  await rejectsLens(
    () => requireWeight(ck, 'encoder.layer.5.output.dense.weight', [32, 64]),
    'invalid-input',
    file,
    'encoder.layer.5.output.dense.weight',
    'missing',
  );
});

test('Hugging Face cache layout: name is org/name; the repo folder resolves through refs/main', async () => {
  const snap = hubSnapshot(tempDir('hf'), ['config.json', 'model.safetensors'], 'abc123');
  const repo = path.dirname(path.dirname(snap));
  const ck = await loadCheckpoint(snap);
  assert.equal(ck.name, 'microsoft/deberta-v3-tiny');
  assert.equal(ck.weights.size, 44);
  const viaRepo = await loadCheckpoint(repo);
  assert.equal(viaRepo.dir, snap);
  assert.equal(viaRepo.name, 'microsoft/deberta-v3-tiny');
});

test('F16 and BF16 safetensors read back as the bytes written (round-to-nearest-even)', async () => {
  const dir = copyFixture('v3', 'half', false);
  const values = new Float32Array([0, 1, -2.5, 3.14159, 65504, 1e-8, -0.0001, 123.456, 1 / 3, 7e4]);
  const dtypes: SafetensorsDType[] = ['F16', 'BF16', 'F32'];
  writeSafetensors(
    path.join(dir, 'model.safetensors'),
    dtypes.map((d) => fromArray(`deberta.t_${d}`, [2, 5], values, d)),
    { chunkElements: 3 }, // several chunks per tensor
  );
  const ck = await loadCheckpoint(dir);
  const half = ck.weights.get('t_F16')!;
  const bf = ck.weights.get('t_BF16')!;
  assert.equal(half.dtype, 'float16');
  assert.equal(bf.dtype, 'bfloat16');
  assert.equal(half.byteLength, 20);
  assert.deepEqual(Buffer.from(half.read()), Buffer.from(encode(values, 'F16')));
  assert.deepEqual(Buffer.from(bf.read()), Buffer.from(encode(values, 'BF16')));
  assert.deepEqual(f32(ck.weights.get('t_F32')!), values);
  // Known encodings: 1 → 0x3c00 (half), 0x3f80 (bf16); 65504 is the largest half; 7e4 overflows to +inf.
  const h = new Uint16Array(half.read().slice().buffer);
  const b = new Uint16Array(bf.read().slice().buffer);
  assert.deepEqual([h[1], h[2], h[4], h[9]], [0x3c00, 0xc100, 0x7bff, 0x7c00]);
  assert.deepEqual([b[1], b[2]], [0x3f80, 0xc020]);
  // Decoded, each value is within the format's half-ulp.
  const decodeHalf = (x: number) => {
    const e = (x >> 10) & 31;
    const m = x & 1023;
    const v = e === 0 ? m * 2 ** -24 : e === 31 ? Infinity : (1 + m / 1024) * 2 ** (e - 15);
    return x & 0x8000 ? -v : v;
  };
  for (let k = 0; k < 9; k++) {
    const want = at(values, k);
    assert.ok(Math.abs(decodeHalf(at(h, k)) - want) <= Math.max(Math.abs(want) * 2 ** -11, 2 ** -25), `half ${k}`);
  }
  for (let k = 0; k < 10; k++) {
    const want = at(values, k);
    const v = at(new Float32Array(new Uint32Array([at(b, k) << 16]).buffer), 0);
    assert.ok(Math.abs(v - want) <= Math.abs(want) * 2 ** -8, `bf16 ${k}`);
  }
});

test('sharded safetensors (model.safetensors.index.json) equal the single file', async () => {
  const single = await loadCheckpoint(TINY('v3'));
  const dir = copyFixture('v3', 'sharded', false);
  const names = [...single.weights.keys()];
  const half = Math.ceil(names.length / 2);
  const shards = [names.slice(0, half), names.slice(half)];
  const weightMap: Record<string, string> = {};
  shards.forEach((part, k) => {
    const file = `model-0000${k + 1}-of-00002.safetensors`;
    writeSafetensors(
      path.join(dir, file),
      part.map((n) => fromArray(`deberta.${n}`, single.weights.get(n)!.shape, f32(single.weights.get(n)!))),
    );
    for (const n of part) weightMap[`deberta.${n}`] = file;
  });
  const index = path.join(dir, 'model.safetensors.index.json');
  fs.writeFileSync(index, JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }));
  const ck = await loadCheckpoint(dir);
  assert.equal(ck.weightFiles.length, 2);
  assert.deepEqual([...ck.weights.keys()].sort(), names.sort());
  for (const n of names) assert.deepEqual(f32(ck.weights.get(n)!), f32(single.weights.get(n)!), n);

  // A tensor the index places in a shard that lacks it, a missing shard, a path out of the folder.
  fs.writeFileSync(index, JSON.stringify({ weight_map: { ...weightMap, 'deberta.ghost': 'model-00001-of-00002.safetensors' } }));
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', 'model-00001-of-00002.safetensors', 'deberta.ghost');
  fs.writeFileSync(index, JSON.stringify({ weight_map: { ...weightMap, 'deberta.x': 'model-00003-of-00003.safetensors' } }));
  await rejectsLens(() => loadCheckpoint(dir), 'not-found', 'model-00003-of-00003.safetensors');
  fs.writeFileSync(index, JSON.stringify({ weight_map: { 'deberta.x': '../../etc/passwd' } }));
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', index, 'deberta.x');
  fs.writeFileSync(index, '{"weight_map": ');
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', index);
});
