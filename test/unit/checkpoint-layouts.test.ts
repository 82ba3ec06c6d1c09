// Real checkpoint folder layouts, each built into a graph AND run, against Hugging Face's own numbers: a hub
// snapshot (relative symlinks into blobs/) with the graph cache on the same file system and on another one, a
// folder of absolute symlinks, read-only weights, a sharded index with symlinked shards, a path with spaces and
// non-ASCII characters. None of them may be written to.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { openModel } from '../../src/engine/model';
import { fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';
import { f32 } from './checkpoint-test-utils';
import { FIXTURES } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const FILES = ['config.json', 'model.safetensors', 'spm.model', 'special_tokens_map.json', 'tokenizer_config.json'];

interface ExpectedCase { name: string; input_ids: number[]; expected: { layers: { probs: number[][][] }[] } }
const CASE: ExpectedCase = JSON.parse(fs.readFileSync(path.join(V3, 'expected_outputs.json'), 'utf8')).cases[0];

const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
function tempIn(parent: string, name: string): string {
  const d = fs.mkdtempSync(path.join(parent, `lens-${name}-`));
  made.push(d);
  return d;
}

/** True when `a` and `b` lie on different file systems (a hard link between them is impossible). */
function otherFileSystem(a: string, b: string): boolean {
  return fs.statSync(a).dev !== fs.statSync(b).dev;
}
/** A folder on a file system other than os.tmpdir()'s, if this machine has one we may write to. */
const OTHER_FS = ['/dev/shm', '/run/user', os.homedir()].find((d) => {
  try {
    fs.accessSync(d, fs.constants.W_OK);
    return otherFileSystem(d, os.tmpdir());
  } catch {
    return false;
  }
});

/** huggingface_hub's layout: models--org--name/{blobs/<sha>, snapshots/<rev>/<file> → ../../blobs/<sha>, refs/main}. */
function hubSnapshot(root: string): string {
  const repo = path.join(root, 'models--microsoft--deberta-v3-tiny');
  const snap = path.join(repo, 'snapshots', '0123abcd');
  fs.mkdirSync(snap, { recursive: true });
  fs.mkdirSync(path.join(repo, 'blobs'));
  fs.mkdirSync(path.join(repo, 'refs'));
  fs.writeFileSync(path.join(repo, 'refs', 'main'), '0123abcd');
  FILES.forEach((f, k) => {
    const blob = `${k}f3a9c${'0'.repeat(34)}`; // blobs are named by their hash, not by the file name
    fs.copyFileSync(path.join(V3, f), path.join(repo, 'blobs', blob));
    fs.symlinkSync(path.join('..', '..', 'blobs', blob), path.join(snap, f));
  });
  return snap;
}

/** Every file under `dir` (symlinks not followed) with its size, mtime and mode: what must not change. */
function snapshotTree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: false }).map(String).sort().map((rel) => {
    const st = fs.lstatSync(path.join(dir, rel));
    return `${rel} ${st.size} ${st.mtimeMs} ${st.mode.toString(8)}`;
  });
}

/** The fixture's files copied into `dir` (created). */
function copyFiles(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of FILES) fs.copyFileSync(path.join(V3, f), path.join(dir, f));
  return dir;
}

/** Opens the folder, builds the graph, explains one case and checks every layer's probabilities against HF. */
async function explainsLikeHf(dir: string, cacheDir: string): Promise<{ cached: boolean; hash: string }> {
  const untouched = snapshotTree(dir);
  const model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 1 });
  try {
    const r = await model.explain({ ids: CASE.input_ids });
    CASE.expected.layers.forEach((want, l) => {
      const got = r.tensor(l, 'probs');
      const flat = want.probs.flat(2);
      assert.equal(got.length, flat.length);
      const maxDiff = flat.reduce((m, w, k) => Math.max(m, Math.abs(w - got[k])), 0);
      assert.ok(maxDiff <= 1e-5, `layer ${l} probs differ from Hugging Face's by ${maxDiff}`);
    });
    return { cached: model.loadTimings.graph_cached, hash: model.info.checkpoint_hash };
  } finally {
    await model.dispose();
    assert.deepEqual(snapshotTree(dir), untouched, 'the model folder was modified');
  }
}

describe('real layouts build and run end to end', () => {
  it('hub snapshot (relative symlinks into blobs/), graph cache on the same file system', async () => {
    const root = tempIn(os.tmpdir(), 'hub');
    const snap = hubSnapshot(root);
    const cacheDir = path.join(root, 'deberta-lens'); // beside the hub folder, as ~/.cache/{huggingface,deberta-lens}
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, false);
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, true, 'the second open reuses the graph');
    assert.equal((await explainsLikeHf(path.dirname(path.dirname(snap)), cacheDir)).cached, true, 'the repo folder resolves to the same snapshot');
  });

  it('hub snapshot, graph cache on another file system', { skip: OTHER_FS ? false : 'no second writable file system here' }, async () => {
    const snap = hubSnapshot(tempIn(os.tmpdir(), 'hub'));
    const cacheDir = tempIn(OTHER_FS!, 'cache');
    assert.ok(otherFileSystem(snap, cacheDir));
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, false);
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, true);
  });

  it('a folder of absolute symlinks to files elsewhere', async () => {
    const root = tempIn(os.tmpdir(), 'abs');
    const store = copyFiles(path.join(root, 'store'));
    const dir = path.join(root, 'model');
    fs.mkdirSync(dir);
    for (const f of FILES) fs.symlinkSync(path.join(store, f), path.join(dir, f));
    assert.equal((await explainsLikeHf(dir, path.join(root, 'cache'))).cached, false);
  });

  it('read-only weights in a read-only folder', async () => {
    const root = tempIn(os.tmpdir(), 'ro');
    const dir = copyFiles(path.join(root, 'model'));
    for (const f of FILES) fs.chmodSync(path.join(dir, f), 0o444);
    fs.chmodSync(dir, 0o555);
    try {
      assert.equal((await explainsLikeHf(dir, path.join(root, 'cache'))).cached, false);
      assert.equal((await explainsLikeHf(dir, path.join(root, 'cache'))).cached, true);
    } finally {
      fs.chmodSync(dir, 0o755); // so that the temp folder can be removed
    }
  });

  it('sharded safetensors index whose shards are symlinks into blobs/', async () => {
    const root = tempIn(os.tmpdir(), 'shards');
    const single = await loadCheckpoint(V3);
    const snap = hubSnapshot(root);
    const blobs = path.join(snap, '..', '..', 'blobs');
    fs.rmSync(path.join(snap, 'model.safetensors'));
    const names = [...single.weights.keys()];
    const parts = [names.slice(0, 15), names.slice(15, 30), names.slice(30)];
    const weightMap: Record<string, string> = {};
    parts.forEach((part, k) => {
      const file = `model-0000${k + 1}-of-00003.safetensors`;
      const blob = `shard${k}${'e'.repeat(34)}`;
      writeSafetensors(path.join(blobs, blob), part.map((n) => fromArray(`deberta.${n}`, single.weights.get(n)!.shape, f32(single.weights.get(n)!))));
      fs.symlinkSync(path.join('..', '..', 'blobs', blob), path.join(snap, file));
      for (const n of part) weightMap[`deberta.${n}`] = file;
    });
    fs.writeFileSync(path.join(blobs, 'index'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
    fs.symlinkSync(path.join('..', '..', 'blobs', 'index'), path.join(snap, 'model.safetensors.index.json'));
    assert.equal((await loadCheckpoint(snap)).weightFiles.length, 3);
    assert.equal((await explainsLikeHf(snap, path.join(root, 'deberta-lens'))).cached, false);
    assert.equal((await explainsLikeHf(snap, path.join(root, 'deberta-lens'))).cached, true);
  });

  it('model folder and cache on paths with spaces and non-ASCII characters', async () => {
    const root = tempIn(os.tmpdir(), 'names');
    const dir = copyFiles(path.join(root, 'Mödèl földer — 模型 ü', 'deberta v3 (tiny) #1'));
    const cacheDir = path.join(root, 'cäche dir 缓存');
    assert.equal((await explainsLikeHf(dir, cacheDir)).cached, false);
    assert.equal((await explainsLikeHf(dir, cacheDir)).cached, true);
  });
});
