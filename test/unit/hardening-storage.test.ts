// Issue 26's finding on shared storages: a 150 KB .bin whose 870 tensors view one (deflated) storage made explain
// copy each view, 2.4 GB of memory and cache. Views of one storage stay shared, and what is copied out is bounded
// by the archive's uncompressed size.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { readTorchBin } from '../../src/engine/checkpoint/torch-bin';
import { GraphBuilder } from '../../src/engine/graph/graph-builder';
import { PickleWriter, writeZip } from '../../tools/fixtures/write-torch-bin';
import { rejectsLens, tempDir } from './checkpoint-test-utils';
import { at } from './helpers';

/** A torch-style zip whose `names` all view one float32 storage of `numel` zeros (deflated when asked). */
function writeViews(
  file: string,
  numel: number,
  names: string[],
  view: { offset: number; shape: number[]; stride: number[] },
  deflate: boolean,
) {
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d); // EMPTY_DICT
  p.put();
  p.mark();
  for (const name of names) {
    p.unicode(name);
    p.rebuildTensor('FloatStorage', '0', numel, view.offset, view.shape, view.stride);
  }
  p.op(0x75); // SETITEMS
  p.op(0x2e);
  writeZip(
    file,
    [
      { name: 'archive/data.pkl', data: p.bytes() },
      { name: 'archive/data/0', data: new Uint8Array(numel * 4), deflate },
    ],
    false,
  );
}

const NAMES = Array.from({ length: 870 }, (_, k) => `encoder.layer.${k}.attention.self.query_proj.weight`);

test('hardening: 870 distinct views of one deflated storage are refused before anything is copied', async () => {
  const file = path.join(tempDir('views'), 'pytorch_model.bin');
  // Distinct views (offsets differ by one element), each nearly the whole 16 MiB storage.
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d);
  p.put();
  p.mark();
  const numel = 4 * 2 ** 20;
  NAMES.forEach((name, k) => {
    p.unicode(name);
    p.rebuildTensor('FloatStorage', '0', numel, k, [numel - 1000], [1]);
  });
  p.op(0x75);
  p.op(0x2e);
  writeZip(
    file,
    [
      { name: 'archive/data.pkl', data: p.bytes() },
      { name: 'archive/data/0', data: new Uint8Array(numel * 4), deflate: true },
    ],
    false,
  );
  assert.ok(fs.statSync(file).size < 200_000, 'a small file');
  await rejectsLens(() => readTorchBin(file), 'corrupt', file, 'once copied out of their storages', 'clone()');
});

test('hardening: identical views (tied weights) count once and share one copy in the graph', () => {
  const file = path.join(tempDir('tied'), 'pytorch_model.bin');
  const numel = 256 * 1024; // 1 MiB of float32
  writeViews(file, numel, NAMES, { offset: 0, shape: [512, 512], stride: [512, 1] }, true);
  const { tensors } = readTorchBin(file);
  assert.equal(tensors.length, 870);
  const key = at(tensors, 0).shareKey;
  assert.ok(key !== undefined && tensors.every((t) => t.shareKey === key), 'one key for one view');
  const g = new GraphBuilder();
  for (const t of tensors) g.weight(t);
  assert.equal(g.placement.blobBytes, numel * 4, 'the graph holds the bytes once, not 870 times');
  const inits = g.build('x').initializers;
  assert.equal(inits.length, 870);
  assert.ok(inits.every((i) => i.external?.offset === 0 && i.external.location === 'weights.bin'));
});

test('hardening: ordinary transposed views within the archive size still load', () => {
  const file = path.join(tempDir('ok-views'), 'pytorch_model.bin');
  writeViews(file, 64, ['a', 'b'], { offset: 0, shape: [8, 8], stride: [1, 8] }, false);
  const { tensors } = readTorchBin(file);
  assert.equal(tensors.length, 2);
  assert.equal(at(tensors, 0).read().length, 256);
});
