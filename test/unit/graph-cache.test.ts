// The graph cache holds what its key says: never a graph over bytes other than those it was built from, bounded
// in size (least recently used evicted, never one in use), and its file-hash records used only for the exact
// inode state they were taken in.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { evict, listEntries } from '../../src/engine/cache/cache-usage';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { type ByteObserver, hashFiles } from '../../src/engine/checkpoint/hash';
import { openModel } from '../../src/engine/model/open-model';
import { explainV3Case } from './checkpoint-test-utils';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-gcache-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function modelDir(name: string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(V3, f), path.join(dir, f));
  return dir;
}

const LONG_AGO = new Date('2024-01-02T03:04:05Z'); // an mtime old enough for hash records to be kept

/** Weights B: A with layer 0's query projection negated — same size, different attention. */
async function weightsB(dir: string): Promise<Buffer> {
  const t = (await loadCheckpoint(dir)).weights.get('encoder.layer.0.attention.self.query_proj.weight')!;
  const bytes = fs.readFileSync(path.join(dir, 'model.safetensors'));
  const f = new Float32Array(bytes.buffer, bytes.byteOffset + t.offset!, t.byteLength / 4);
  for (let k = 0; k < f.length; k++) f[k] = -at(f, k);
  return bytes;
}

describe('stale numbers', () => {
  it('explain A; overwrite in place with B (mtime restored); explain; A back as a new file; explain → A again', async () => {
    const dir = modelDir('inplace');
    const cacheDir = path.join(tmp, 'cache-inplace');
    const file = path.join(dir, 'model.safetensors');
    const a = fs.readFileSync(file);
    const b = await weightsB(dir);
    fs.utimesSync(file, LONG_AGO, LONG_AGO);

    const first = await explainV3Case(dir, cacheDir);
    assert.ok(first.diff <= 1e-5, `A matches HF (${first.diff})`);
    assert.equal((await explainV3Case(dir, cacheDir)).cached, true);

    // In place: same inode, same size, and the old mtime put back — only the ctime tells.
    const ino = fs.statSync(file).ino;
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, b, 0, b.length, 0);
    fs.closeSync(fd);
    fs.utimesSync(file, LONG_AGO, LONG_AGO);
    assert.equal(fs.statSync(file).ino, ino);
    const second = await explainV3Case(dir, cacheDir);
    assert.notEqual(second.hash, first.hash, 'B has its own hash');
    assert.ok(second.diff > 1e-2, `B's attention is not A's (${second.diff})`);

    // A's exact bytes back as a new file (a new inode): the entry keyed by A's hash linked the old inode, now B.
    fs.rmSync(file);
    fs.writeFileSync(file, a);
    fs.utimesSync(file, LONG_AGO, LONG_AGO);
    assert.notEqual(fs.statSync(file).ino, ino);
    const third = await explainV3Case(dir, cacheDir);
    assert.equal(third.hash, first.hash, "A's hash");
    assert.equal(third.cached, false, 'the stale entry was rebuilt');
    assert.ok(third.diff <= 1e-5, `A's attention (${third.diff} from HF)`);
    assert.equal((await explainV3Case(dir, cacheDir)).cached, true, 'and is reused afterwards');
  });

  it('the same scenario with fresh mtimes (no hash records kept): B then A', async () => {
    const dir = modelDir('fresh');
    const cacheDir = path.join(tmp, 'cache-fresh');
    const file = path.join(dir, 'model.safetensors');
    const a = fs.readFileSync(file);
    const first = await explainV3Case(dir, cacheDir);
    fs.writeFileSync(file, await weightsB(dir)); // truncates and rewrites the same inode
    const second = await explainV3Case(dir, cacheDir);
    assert.ok(second.diff > 1e-2 && second.hash !== first.hash);
    fs.rmSync(file);
    fs.writeFileSync(file, a);
    const third = await explainV3Case(dir, cacheDir);
    assert.deepEqual([third.hash, third.diff <= 1e-5], [first.hash, true]);
  });

  it('a hash record serves a new process, only for the exact inode state it was taken in', async () => {
    const dir = modelDir('records');
    const store = path.join(tmp, 'records-store');
    const file = path.join(dir, 'model.safetensors');
    fs.utimesSync(file, LONG_AGO, LONG_AGO);
    const truth = at((await loadCheckpoint(dir, { hashStore: store })).hashed, 1);
    const record = path.join(store, `${truth.identity.dev}-${truth.identity.ino}.json`);
    assert.ok(fs.existsSync(record), 'a settled file is remembered');
    // What a new process (a CLI run, a restarted extension host) reads for this file.
    const HASH = path.join(REPO_ROOT, 'out', 'src', 'engine', 'checkpoint', 'hash.js');
    const fresh = () =>
      spawnSync(
        process.execPath,
        [
          '-e',
          `require(${JSON.stringify(HASH)}).hashFiles([process.argv[1]], process.argv[2]).then((h) => process.stdout.write(h.files[0].sha256))`,
          file,
          store,
        ],
        { encoding: 'utf8' },
      ).stdout;
    assert.equal(fresh(), truth.sha256);
    // Tampered with, the record is believed while the file's state is the one recorded (so it is what is read)…
    const fake = 'f'.repeat(64);
    fs.writeFileSync(record, JSON.stringify({ ...JSON.parse(fs.readFileSync(record, 'utf8')), sha256: fake }));
    assert.equal(fresh(), fake);
    // …and not once the ctime moved (utimes restores an mtime, never a ctime).
    fs.chmodSync(file, 0o600);
    fs.utimesSync(file, LONG_AGO, LONG_AGO);
    assert.equal(fresh(), truth.sha256);
    // A recent mtime is never remembered: a second write within the timestamp granularity would go unseen.
    fs.rmSync(store, { recursive: true, force: true });
    fs.utimesSync(file, new Date(), new Date());
    assert.equal(fresh(), truth.sha256);
    assert.equal(fs.existsSync(store) ? fs.readdirSync(store).length : 0, 0);
  });

  it('a weight file replaced after explain: a layer computed later is refused, never mixed from old and new weights', async () => {
    const dir = modelDir('replaced');
    const cacheDir = path.join(tmp, 'cache-replaced');
    const file = path.join(dir, 'model.safetensors');
    const b = await weightsB(dir);
    const model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 1 });
    try {
      const r = await model.explain({ ids: [1, 5, 6, 2] });
      assert.ok((await r.load(1)).probs.every(Number.isFinite));
      // A new file under the same name (an editor's or a downloader's atomic rename).
      fs.writeFileSync(`${file}.new`, b);
      fs.renameSync(`${file}.new`, file);
      await assert.rejects(r.load(0), /model\.safetensors: changed since the model was loaded: load the model again/);
      assert.ok((await r.load(1)).probs.every(Number.isFinite), 'a layer computed before stays readable');
      r.release();
    } finally {
      await model.dispose();
    }
  });
});

describe('processes building one entry at once', () => {
  it("all open it: none fails on another's folder (a stale or just-published entry)", async () => {
    const dir = modelDir('race');
    const cacheDir = path.join(tmp, 'cache-race');
    const engine = (m: string) => JSON.stringify(path.join(REPO_ROOT, 'out', 'src', 'engine', ...m.split('/')));
    const child = `
      const { loadCheckpoint } = require(${engine('checkpoint/index.js')});
      const { ensureGraph } = require(${engine('graph/graph-cache.js')});
      loadCheckpoint(process.argv[1]).then((ck) => ensureGraph(ck, process.argv[2]).release())
        .catch((e) => { process.stderr.write(e.message); process.exit(1); });`;
    const failures: string[] = [];
    for (let round = 0; round < 10; round++) {
      fs.rmSync(path.join(cacheDir, 'graphs'), { recursive: true, force: true });
      const runs = Array.from(
        { length: 5 },
        () =>
          new Promise<void>((resolve) => {
            const p = spawn(process.execPath, ['-e', child, dir, cacheDir], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            p.stderr.on('data', (d: Buffer) => (err += d.toString()));
            p.on('exit', (code) => (code === 0 || failures.push(err), resolve()));
          }),
      );
      await Promise.all(runs);
    }
    assert.deepEqual(failures, []);
    assert.equal(listEntries(cacheDir).length, 1);
  });
});

describe('a check fed the same bytes as the hash', () => {
  it('is fed each byte once, and its findings are remembered with the hash (not re-read while unchanged)', async () => {
    const dir = modelDir('observer');
    const store = path.join(tmp, 'observer-store');
    const files = ['config.json', 'model.safetensors'].map((f) => path.join(dir, f));
    for (const f of files) fs.utimesSync(f, LONG_AGO, LONG_AGO);
    const counter = () => {
      const fed = [0, 0];
      const recalled: unknown[] = [];
      const observer: ByteObserver = {
        feed: (k, chunk, offset) => {
          assert.equal(offset, fed[k], 'chunks in order');
          fed[k] = at(fed, k) + chunk.length;
        },
        findings: (k) => ({ bytes: fed[k] }),
        recalled: (k, f) => (recalled[k] = f),
      };
      return { fed, recalled, observer };
    };
    const plain = await hashFiles(files, store); // a record without findings: a check must still read the bytes
    const first = counter();
    const withCheck = await hashFiles(files, store, first.observer);
    assert.equal(withCheck.hash, plain.hash);
    assert.deepEqual(
      first.fed,
      files.map((f) => fs.statSync(f).size),
    );
    const again = counter();
    await hashFiles(files, store, again.observer);
    assert.deepEqual(again.fed, [0, 0], 'nothing read');
    assert.deepEqual(
      again.recalled,
      first.fed.map((bytes) => ({ bytes })),
    );
  });
});

describe('size bound', () => {
  it('evicts least recently used graphs beyond the limit, never one in use', async () => {
    const cacheDir = path.join(tmp, 'cache-lru');
    const dirs = ['m0', 'm1', 'm2', 'm3'].map((name, k) => {
      const dir = modelDir(`lru-${name}`);
      const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...cfg, layer_norm_eps: 1e-7 * (k + 2) }));
      return dir;
    });
    for (const d of dirs.slice(0, 3)) await explainV3Case(d, cacheDir);
    await explainV3Case(at(dirs, 0), cacheDir); // m0 used again: now m1 is the least recently used
    const held = await openModel(at(dirs, 1), { cacheDir, threads: 1 }); // and m1 is in use
    try {
      const byName = () => new Map(listEntries(cacheDir).map((e) => [path.basename(e.model!.dir), e]));
      const before = byName();
      assert.deepEqual([...before.keys()], ['lru-m1', 'lru-m0', 'lru-m2'], 'most recently used first');
      assert.deepEqual(before.get('lru-m1')!.users, [process.pid]);
      assert.ok(
        [...before.values()].every((e) => e.linkedBytes >= 107472),
        'the weights are linked, not copied',
      );
      // Room for two: m2 (least recently used, not in use) goes; m1 stays although older than m0 was.
      const one = Math.max(...[...before.values()].map((e) => e.bytes));
      const gone = evict(cacheDir, 2 * one);
      assert.deepEqual(
        gone.map((e) => path.basename(e.model!.dir)),
        ['lru-m2'],
      );
      assert.deepEqual([...byName().keys()], ['lru-m1', 'lru-m0']);
      // A limit of 0 through openModel: everything not in use goes, the new graph and the held one stay.
      const m3 = await openModel(at(dirs, 3), { cacheDir, threads: 1, cacheMaxGB: 0 });
      await m3.dispose();
      assert.deepEqual([...byName().keys()].sort(), ['lru-m1', 'lru-m3']);
    } finally {
      await held.dispose();
    }
    assert.deepEqual(
      listEntries(cacheDir).map((e) => e.users.length),
      [0, 0],
      'released on dispose',
    );
  });

  it('markers of dead processes and leftovers of interrupted builds do not hold space', async () => {
    const cacheDir = path.join(tmp, 'cache-dead');
    await explainV3Case(modelDir('dead'), cacheDir);
    const entry = at(listEntries(cacheDir), 0);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const marker = path.join(cacheDir, 'in-use', `${entry.key}.${dead}.0-1`);
    fs.writeFileSync(marker, ''); // a process killed while it had the graph open
    const leftover = path.join(cacheDir, 'graphs', `${entry.key}.tmp-${dead}-1`);
    fs.mkdirSync(leftover);
    fs.writeFileSync(path.join(leftover, 'model.onnx'), Buffer.alloc(1 << 20));
    assert.deepEqual(
      listEntries(cacheDir).map((e) => e.users),
      [[]],
    );
    assert.equal(fs.existsSync(marker) || fs.existsSync(leftover), false);
    assert.deepEqual(
      evict(cacheDir, 0).map((e) => e.key),
      [entry.key],
    );
  });
});
