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
import { fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';
import { explainV3Case, f32, hubSnapshot } from './checkpoint-test-utils';
import { FIXTURES } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const FILES = ['config.json', 'model.safetensors', 'spm.model', 'special_tokens_map.json', 'tokenizer_config.json'];

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

/** Every file under `dir` (symlinks not followed) with its size, mtime and mode: what must not change. */
function snapshotTree(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: false })
    .map(String)
    .sort()
    .map((rel) => {
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

/** Builds and runs the graph from `dir`: every layer's probabilities as Hugging Face's; the folder untouched. */
async function explainsLikeHf(dir: string, cacheDir: string): Promise<{ cached: boolean; hash: string }> {
  const untouched = snapshotTree(dir);
  const r = await explainV3Case(dir, cacheDir);
  assert.ok(r.diff <= 1e-5, `probabilities differ from Hugging Face's by ${r.diff}`);
  assert.ok(r.tokenized, 'the tokenizer files loaded from this layout');
  assert.deepEqual(snapshotTree(dir), untouched, 'the model folder was modified');
  return r;
}

describe('real layouts build and run end to end', () => {
  it('hub snapshot (relative symlinks into blobs/), graph cache on the same file system', async () => {
    const root = tempIn(os.tmpdir(), 'hub');
    const snap = hubSnapshot(root, FILES);
    const cacheDir = path.join(root, 'deberta-lens'); // beside the hub folder, as ~/.cache/{huggingface,deberta-lens}
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, false);
    assert.equal((await explainsLikeHf(snap, cacheDir)).cached, true, 'the second open reuses the graph');
    assert.equal(
      (await explainsLikeHf(path.dirname(path.dirname(snap)), cacheDir)).cached,
      true,
      'the repo folder resolves to the same snapshot',
    );
  });

  it('hub snapshot, graph cache on another file system', { skip: OTHER_FS ? false : 'no second writable file system here' }, async () => {
    const snap = hubSnapshot(tempIn(os.tmpdir(), 'hub'), FILES);
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
    const snap = hubSnapshot(root, FILES);
    const blobs = path.join(snap, '..', '..', 'blobs');
    fs.rmSync(path.join(snap, 'model.safetensors'));
    const names = [...single.weights.keys()];
    const parts = [names.slice(0, 15), names.slice(15, 30), names.slice(30)];
    const weightMap: Record<string, string> = {};
    parts.forEach((part, k) => {
      const file = `model-0000${k + 1}-of-00003.safetensors`;
      const blob = `shard${k}${'e'.repeat(34)}`;
      writeSafetensors(
        path.join(blobs, blob),
        part.map((n) => fromArray(`deberta.${n}`, single.weights.get(n)!.shape, f32(single.weights.get(n)!))),
      );
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
