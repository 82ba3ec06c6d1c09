// Issue 26's isolation: with `isolate` (what the extension host sets) the checkpoint is read, hashed and its graphs
// built in the load process (engine/model/load-process.ts) under a budget, and the caller runs on byte ranges. The
// numbers, the summary and every refusal must be those of a load in the caller's own process; a budget hit is one
// line naming the folder.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { isLensError } from '../../src/engine/errors';
import { DEFAULT_LOAD_BUDGET, inspectIsolated, openIsolated } from '../../src/engine/model/isolated-load';
import { OVER_BUDGET, overBudget, startWatchdog, WATCHDOG_ENV } from '../../src/engine/model/load-watchdog';
import { inspectModel, openModel } from '../../src/engine/model/open-model';
import { writeTorchBin, writeZip, type TorchTensor } from '../../tools/fixtures/write-torch-bin';
import { TINY, copyFixture, f32, rejectsLens, tempDir } from './checkpoint-test-utils';

const TEXT = 'Attention, read in another process.';

async function layers(dir: string, isolate: boolean, cacheDir: string): Promise<{ hash: string; tensors: Record<string, Float32Array>[] }> {
  const m = await openModel(dir, { isolate, cacheDir, executionProvider: 'cpu', threads: 1 });
  try {
    const r = await m.explain({ text: TEXT });
    const out: Record<string, Float32Array>[] = [];
    for (let l = 0; l < m.info.layers; l++) {
      const t = await r.load(l);
      out.push(Object.fromEntries(Object.entries(t).filter(([, v]) => v instanceof Float32Array)));
    }
    return { hash: m.info.checkpoint_hash, tensors: out };
  } finally {
    await m.dispose();
  }
}

/** Why a call failed: [code, message], or 'ok'. */
async function outcome(run: () => Promise<unknown>): Promise<[string, string] | 'ok'> {
  try {
    await run();
    return 'ok';
  } catch (e) {
    return [isLensError(e) ? e.code : 'internal', (e as Error).message];
  }
}

test('isolated: the same hash, terms and probabilities as a load in this process (v3_tiny, safetensors)', async () => {
  const here = await layers(TINY('v3'), false, tempDir('cache-here'));
  const there = await layers(TINY('v3'), true, tempDir('cache-there'));
  assert.equal(there.hash, here.hash);
  assert.deepEqual(there.tensors, here.tensors);
});

test('isolated: a deflated .bin with strided views — the inflated tensors come back through tensors.bin, same numbers', async () => {
  const ck = await loadCheckpoint(TINY('v1'));
  const tensors = new Map<string, TorchTensor>([...ck.weights].map(([n, t]) => [`deberta.${n}`, { shape: t.shape, data: f32(t) }]));
  const dir = copyFixture('v1', 'deflated', false);
  for (const f of ['tokenizer_config.json', 'spm.model', 'vocab.json', 'merges.txt', 'tokenizer.json']) {
    if (fs.existsSync(path.join(TINY('v1'), f))) fs.copyFileSync(path.join(TINY('v1'), f), path.join(dir, f));
  }
  writeTorchBin(path.join(dir, 'pytorch_model.bin'), tensors, {
    deflate: true,
    transposed: new Set(['deberta.encoder.rel_embeddings.weight']),
  });
  const cacheDir = tempDir('cache-bin');
  const { checkpoint } = await openIsolated({ dir, cacheDir, hashStore: path.join(cacheDir, 'hashes') });
  assert.ok(checkpoint.copies?.endsWith('tensors.bin'), 'the load process wrote the copies');
  assert.ok(
    checkpoint.tensors.every((t) => t.file === undefined && t.copiedAt !== undefined),
    'every deflated tensor is read from the copies, none from the zip',
  );
  const here = await layers(dir, false, tempDir('cache-bin-here'));
  const there = await layers(dir, true, cacheDir);
  assert.equal(there.hash, here.hash);
  assert.deepEqual(there.tensors, here.tensors);
});

test('isolated: inspect gives the same summary', async () => {
  for (const v of ['v1', 'v2', 'v3'] as const)
    assert.deepEqual(await inspectModel(TINY(v), { isolate: true }), await inspectModel(TINY(v)));
});

test('isolated: hostile and broken folders end in the same one line as in this process', async () => {
  const cases: string[] = [];
  // A missing folder, and a config.json that is a folder.
  cases.push(path.join(tempDir('gone'), 'nothing-here'));
  const dirConfig = copyFixture('v3', 'dir-config', false);
  fs.rmSync(path.join(dirConfig, 'config.json'));
  fs.mkdirSync(path.join(dirConfig, 'config.json'));
  cases.push(dirConfig);
  // A safetensors header claiming a tensor far larger than the file.
  const huge = copyFixture('v3', 'huge-header', false);
  const header = Buffer.from(
    JSON.stringify({
      'deberta.embeddings.word_embeddings.weight': { dtype: 'F32', shape: [2 ** 24, 2 ** 20], data_offsets: [0, 2 ** 46] },
    }),
  );
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  fs.writeFileSync(path.join(huge, 'model.safetensors'), Buffer.concat([len, header]));
  cases.push(huge);
  // A 33 KB .bin whose pickle inflates to 32 MiB of EMPTY_DICT opcodes.
  const bomb = copyFixture('v3', 'dict-bomb', false);
  const ops = new Uint8Array(32 * 2 ** 20).fill(0x7d);
  ops.set([0x80, 2]);
  writeZip(path.join(bomb, 'pytorch_model.bin'), [{ name: 'archive/data.pkl', data: ops, deflate: true }], false);
  cases.push(bomb);
  for (const dir of cases) {
    const here = await outcome(() => inspectModel(dir));
    assert.notEqual(here, 'ok', dir);
    assert.deepEqual(await outcome(() => inspectModel(dir, { isolate: true })), here, dir);
    const cacheDir = tempDir('cache-hostile');
    assert.deepEqual(
      await outcome(() => openModel(dir, { isolate: true, cacheDir })),
      await outcome(() => openModel(dir, { cacheDir })),
      dir,
    );
  }
});

test('isolated: a heap, memory or time budget hit ends in one line naming the folder', async () => {
  const bomb = copyFixture('v3', 'heap-bomb', false);
  const ops = new Uint8Array(32 * 2 ** 20).fill(0x7d);
  ops.set([0x80, 2]);
  writeZip(path.join(bomb, 'pytorch_model.bin'), [{ name: 'archive/data.pkl', data: ops, deflate: true }], false);
  // The parsers' own budgets refuse this pickle; a load process with less heap than it takes stops first.
  await rejectsLens(() => inspectIsolated(bomb, { ...DEFAULT_LOAD_BUDGET, heapMb: 48 }), 'corrupt', bomb, 'more than 48 MB of heap');
  await rejectsLens(
    () => inspectIsolated(bomb, { ...DEFAULT_LOAD_BUDGET, rssMb: 1, watchMs: 5 }),
    'corrupt',
    bomb,
    'more than 1 MB of memory',
  );
  // The load process's own watch (every platform), with this process's /proc watch off.
  await rejectsLens(
    () => inspectIsolated(bomb, { ...DEFAULT_LOAD_BUDGET, rssMb: 1, watchMs: 5, watchFromOutside: false }),
    'corrupt',
    bomb,
    'more than 1 MB of memory',
  );
  await rejectsLens(
    () => inspectIsolated(TINY('v3'), { ...DEFAULT_LOAD_BUDGET, parseMs: 1 }),
    'corrupt',
    TINY('v3'),
    'took longer than 0.001 s',
  );
});

test('the load process says why its own watchdog stopped it: the limit, and whether free memory set it', () => {
  assert.deepEqual(overBudget(`x\n${OVER_BUDGET} 1536 MB\n`), { mb: 1536, machine: false });
  assert.deepEqual(overBudget(`${OVER_BUDGET} 900 MB machine\n`), { mb: 900, machine: true });
  assert.equal(overBudget('Reached heap limit'), undefined);
  assert.equal(startWatchdog({}), undefined, 'no budget given: no watchdog');
  assert.equal(startWatchdog({ [WATCHDOG_ENV]: '{"rssMb":-1,"perWeightByte":3,"watchMs":100}' }), undefined, 'a nonsense budget: none');
});
