// The engine around the graph: execution-provider fallback, cancellation, graph cache, long inputs, bad inputs.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { isLensError } from '../../src/engine/errors';
import { openModel } from '../../src/engine/model/open-model';
import { providerOrder } from '../../src/engine/runtime/execution-providers';
import { MAX_SPARES, SPILL_DIR, spillFilesHeld } from '../../src/engine/runtime/spill';
import { runtimeMallocEnv } from '../../src/engine/runtime/session';
import { layerCache } from '../../src/engine/memory/layer-cache';
import { checkLength } from '../../src/engine/run/input';
import { nextHeadRun } from '../../src/engine/run/layer';
import { estimateMemory } from '../../src/engine/memory/estimate';
import type { ExplainResult } from '../../src/engine/result/explain-result';
import { spawn, spawnSync } from 'node:child_process';
import { FIXTURES, at, rejectsWith } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const V2 = path.join(FIXTURES, 'deberta', 'v2_tiny');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-runtime-'));
const cacheDir = path.join(tmp, 'cache');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * The same text explained by a model computing each layer in one run (`a`) and one computing a head a run (`b`),
 * for `body`; both models are closed after it.
 */
async function wholeAndChunked(body: (a: ExplainResult, b: ExplainResult) => Promise<void>): Promise<void> {
  const whole = await openModel(V3, { cacheDir });
  const chunked = await openModel(V3, { cacheDir, layerChunkBytes: 1 }); // one head per one-layer run
  try {
    const text = 'the quick brown fox jumps over the lazy dog';
    await body(await whole.explain({ text }), await chunked.explain({ text }));
  } finally {
    await whole.dispose();
    await chunked.dispose();
  }
}

describe('execution providers', () => {
  it('orders the preferred provider first and always ends with CPU', () => {
    assert.deepEqual(providerOrder('cpu', 'linux'), ['cpu']);
    assert.deepEqual(providerOrder('webgpu', 'linux'), ['webgpu', 'cpu']);
    assert.deepEqual(providerOrder('dml', 'win32'), ['dml', 'cpu']);
    assert.deepEqual(providerOrder('auto', 'darwin'), ['coreml', 'cpu']);
    assert.equal(providerOrder('auto', 'linux').at(-1), 'cpu');
  });

  for (const ep of ['webgpu', 'cuda'] as const) {
    it(`${ep}: runs there, or falls back to CPU and says why — the result names the provider that ran`, async () => {
      const model = await openModel(V3, { cacheDir, executionProvider: ep });
      try {
        const r = await model.explain({ ids: [1, 9, 17, 2] });
        assert.equal(r.model.execution_provider, model.session.provider);
        if (model.session.provider === 'cpu') {
          assert.equal(model.session.providerErrors[0]?.provider, ep);
          assert.ok(model.session.providerErrors[0].error.length > 0);
        } else assert.equal(model.session.provider, ep);
      } finally {
        await model.dispose();
      }
    });
  }
});

describe('runs', () => {
  it('a cancelled run rejects with "cancelled" and the next run works', async () => {
    const model = await openModel(V3, { cacheDir, threads: 1, maxTokens: 4096 });
    try {
      const ids = [1, ...Array.from({ length: 1998 }, (_, k) => 5 + (k % 150)), 2]; // a run of ~100 ms or more
      const ac = new AbortController();
      const run = model.explain({ ids }, ac.signal);
      setTimeout(() => ac.abort(), 5);
      await rejectsWith(run, 'cancelled', /cancelled/);
      const r = await model.explain({ ids: [1, 9, 17, 2] });
      assert.equal(r.n, 4);
    } finally {
      await model.dispose();
    }
  });

  it('a layer asked for while another explain is cancelled still arrives (computed again in the restarted runtime)', async () => {
    const model = await openModel(V3, { cacheDir, threads: 1, maxTokens: 4096 });
    try {
      const r = await model.explain({ text: 'a short text to look at' });
      const ids = [1, ...Array.from({ length: 1998 }, (_, k) => 5 + (k % 150)), 2];
      const ac = new AbortController();
      const run = model.explain({ ids }, ac.signal);
      const layer = r.load(1); // queued behind the long run in the same runtime process
      setTimeout(() => ac.abort(), 5);
      await rejectsWith(run, 'cancelled', /cancelled/);
      const t = await layer;
      assert.equal(t.probs.length, model.info.heads * r.n * r.n);
    } finally {
      await model.dispose();
    }
  });

  it('a runtime process that dies mid-run (a native crash) fails that run with one line; the next run works', async () => {
    const model = await openModel(V3, { cacheDir, threads: 1, maxTokens: 4096 });
    try {
      const ids = [1, ...Array.from({ length: 1998 }, (_, k) => 5 + (k % 150)), 2];
      const run = model.explain({ ids });
      setTimeout(() => process.kill(model.session.pid!, 'SIGSEGV'), 20);
      await rejectsWith(run, 'runtime', /runtime process stopped \(SIGSEGV\)/);
      const r = await model.explain({ ids: [1, 9, 17, 2] });
      assert.equal((await r.load(0)).probs.length, model.info.heads * 16);
    } finally {
      await model.dispose();
    }
  });

  it('the runtime process gets glibc huge pages for its allocations, after whatever tunables the user set', () => {
    // What the runtime process is started with (glibc rewrites GLIBC_TUNABLES in its own copy, so the test reads
    // the environment handed to fork, not /proc).
    assert.deepEqual(runtimeMallocEnv({}), {
      MALLOC_MMAP_THRESHOLD_: String(32 << 20),
      MALLOC_TRIM_THRESHOLD_: String(4 * 2 ** 30),
      GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
    });
    assert.equal(
      runtimeMallocEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES,
      'glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1',
    );
  });

  it('a closed model starts no runtime again: its results say so when a layer is asked for', async () => {
    const model = await openModel(V3, { cacheDir });
    const r = await model.explain({ text: 'closed before the view opens' });
    await model.dispose();
    await rejectsWith(r.load(0), 'runtime', /model was closed.*explain again/);
    assert.equal(model.session.pid, undefined, 'no runtime process was started again');
  });

  it('caches the graph by checkpoint content: reopening reuses it, a changed checkpoint rebuilds', async () => {
    const dir = path.join(tmp, 'v3copy');
    fs.cpSync(V3, dir, { recursive: true });
    const first = await openModel(dir, { cacheDir });
    await first.dispose();
    const second = await openModel(dir, { cacheDir });
    await second.dispose();
    assert.equal(second.loadTimings.graph_cached, true);
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...cfg, layer_norm_eps: 1e-6 }));
    const third = await openModel(dir, { cacheDir });
    await third.dispose();
    assert.equal(third.loadTimings.graph_cached, false);
  });

  it('explains far beyond 512 tokens with relative positions (rows sum to 1, every term finite)', async () => {
    const model = await openModel(V3, { cacheDir, maxTokens: 4096 });
    try {
      const n = 700;
      const ids = [1, ...Array.from({ length: n - 2 }, (_, k) => 5 + ((k * 7) % 150)), 2];
      const r = await model.explain({ ids, layers: [1] });
      await r.load(1);
      for (const kind of ['c2c', 'c2p', 'p2c'] as const) assert.ok(r.tensor(1, kind).every(Number.isFinite), kind);
      const p = r.slice(1, 3, 'probs');
      for (const i of [0, 350, 699]) {
        const sum = p.subarray(i * n, (i + 1) * n).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-4, `row ${i} sums to ${sum}`);
      }
    } finally {
      await model.dispose();
    }
  });

  it('hands out per-head slices as views of the layer tensor', async () => {
    const model = await openModel(V3, { cacheDir });
    try {
      const r = await model.explain({ text: 'the quick brown fox' });
      await r.load(1);
      const n = r.n;
      const s = r.slice(1, 2, 'c2p');
      assert.equal(s.length, n * n);
      assert.equal(s.buffer, r.tensor(1, 'c2p').buffer);
      assert.equal(s[n + 2], r.value(1, 2, 'c2p', 1, 2));
      assert.ok(r.timings && r.timings.total_ms >= r.timings.run_ms);
    } finally {
      await model.dispose();
    }
  });

  it('computes a layer on demand, in head chunks when asked to, with exactly the same numbers', async () => {
    await wholeAndChunked(async (a, b) => {
      for (const l of a.layers) {
        assert.equal(a.isLoaded(l), false);
        const [ta, tb] = [await a.load(l), await b.load(l)];
        for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) assert.deepEqual(tb[kind], ta[kind], `layer ${l} ${kind}`);
      }
    });
  });

  it('computes the head on screen first: loadHead resolves with that head there and the rest still coming, the same numbers', async () => {
    const runs = (H: number, chunk: number, wanted: number[]) => {
      const done = new Set<number>();
      const out: [number, number][] = [];
      for (let next = nextHeadRun(H, done, chunk, wanted); next; next = nextHeadRun(H, done, chunk, wanted)) {
        out.push(next.heads);
        for (let h = next.heads[0]; h < next.heads[1]; h++) done.add(h);
      }
      return out;
    };
    assert.deepEqual(runs(12, 3, [5]), [
      [5, 6],
      [0, 3],
      [3, 5],
      [6, 9],
      [9, 12],
    ]);
    assert.deepEqual(runs(12, 3, []), [
      [0, 3],
      [3, 6],
      [6, 9],
      [9, 12],
    ]);
    assert.deepEqual(
      runs(6, 4, [4, 1]),
      [
        [4, 5],
        [1, 2],
        [0, 1],
        [2, 4],
        [5, 6],
      ],
      'each wanted head alone, then runs between the done ones',
    );
    assert.deepEqual(nextHeadRun(4, new Set([0, 1, 2, 3]), 2, [1]), undefined);
    // The head on screen, come with some kinds only, goes first of the rest: alone, not as a wanted one.
    assert.deepEqual(nextHeadRun(12, new Set(), 3, [], 7), { heads: [7, 8], wanted: false });
    assert.deepEqual(nextHeadRun(12, new Set(), 3, [2], 7), { heads: [2, 3], wanted: true });
    assert.deepEqual(nextHeadRun(12, new Set([7]), 3, [], 7), { heads: [0, 3], wanted: false });
    await wholeAndChunked(async (a, b) => {
      const last = b.heads - 1;
      await b.loadHead(1, last);
      const early = b.headSlice(1, last, 'c2p');
      assert.ok(early, 'the head is there once loadHead resolves');
      assert.equal(b.isLoaded(1), false, 'the other heads are still being computed');
      assert.equal(b.headSlice(1, 0, 'c2p'), undefined, 'a head not computed yet reads as undefined');
      const scores = b.headSlice(1, last, 'scores')!;
      await a.load(1);
      assert.deepEqual(early, a.slice(1, last, 'c2p'));
      assert.deepEqual(scores, a.slice(1, last, 'scores'));
      await b.load(1);
      assert.deepEqual(b.slice(1, 0, 'probs'), a.slice(1, 0, 'probs'));
    });
  });

  it('a head asked for with one kind comes with that kind only; another kind of it brings the rest, next; the same numbers', async () => {
    await wholeAndChunked(async (a, b) => {
      await a.load(1);
      const last = b.heads - 1;
      await b.loadHead(1, last, undefined, 'probs');
      assert.deepEqual(b.headSlice(1, last, 'probs'), a.slice(1, last, 'probs'));
      assert.equal(b.isLoaded(1), false, 'the other heads are still being computed');
      assert.equal(b.headSlice(1, last, 'c2p'), undefined, 'only the kind asked for came with the first run');
      assert.equal(b.headSlice(1, last, 'scores'), undefined);
      // Another kind of the same head: one run brings every kind it lacks, next.
      await b.loadHead(1, last, undefined, 'c2p');
      assert.equal(b.isLoaded(1), false, 'not by waiting for the whole layer');
      for (const kind of ['c2c', 'c2p', 'p2c', 'probs', 'scores'] as const)
        assert.deepEqual(b.headSlice(1, last, kind), a.slice(1, last, kind), kind);
      // Another head of the layer, with one kind: it comes alone with that kind, ahead of the rest.
      await b.loadHead(1, 1, undefined, 'p2c');
      assert.deepEqual(b.headSlice(1, 1, 'p2c'), a.slice(1, 1, 'p2c'));
      assert.equal(b.headSlice(1, 1, 'c2c'), undefined);
      // No kind: every kind of the head.
      await b.loadHead(0, 2, undefined, 'c2c');
      await b.loadHead(0, 2);
      for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) assert.ok(b.headSlice(0, 2, kind), kind);
      await b.load(1);
      for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) assert.deepEqual(b.tensor(1, kind), a.tensor(1, kind), kind);
    });
  });

  it('holds the rest of a layer back while someone works with the result (busy), and computes it once they pause', async () => {
    const model = await openModel(V3, { cacheDir, layerChunkBytes: 1 }); // one head per one-layer run
    try {
      const r = await model.explain({ text: 'the quick brown fox jumps over the lazy dog' });
      await r.loadHead(1, 2, undefined, 'probs');
      const full = r.load(1);
      // Busy for 0.6 s, well past the quiet time each call starts again: no other head is computed meanwhile.
      for (let t = 0; t < 12; t++) {
        r.busy();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(
        Array.from({ length: r.heads }, (_, h) => r.headSlice(1, h, 'c2p') !== undefined),
        Array.from({ length: r.heads }, () => false),
      );
      await full;
      assert.equal(r.isLoaded(1), true);
    } finally {
      await model.dispose();
    }
  });

  it('runs a head someone waits for ahead of background work: another layer computed ahead, or the rest of its own layer', async () => {
    const model = await openModel(V3, { cacheDir, layerChunkBytes: 1 }); // one head per one-layer run
    try {
      const text = 'the quick brown fox jumps over the lazy dog and runs into the woods';
      const r = await model.explain({ text });
      const r2 = await model.explain({ text });
      const last = r.heads - 1;
      // Two layers computed ahead (in the background), then a view asks for a head: at most one background run is
      // with the runtime when it is sent, so it comes back after that one (before, one run of each would be).
      r.prefetch(0);
      r2.prefetch(0);
      await r.loadHead(1, last);
      assert.ok(r.headSlice(1, last, 'probs'), 'the head asked for is there');
      const ahead = [r, r2].flatMap((x) => Array.from({ length: x.heads }, (_, h) => x.headSlice(0, h, 'probs'))).filter((v) => v);
      assert.ok(ahead.length <= 1, `${ahead.length} background heads ran before the head asked for`);
      await r2.load(0);
      // A view asks for the last head of a layer computed ahead: it is run next, not after the heads before it.
      r2.release();
      const r3 = await model.explain({ text });
      r3.prefetch(1);
      await r3.loadHead(1, last);
      assert.equal(r3.headSlice(1, 1, 'probs'), undefined, 'head 1 of the prefetched layer comes after the head asked for');
      await Promise.all([r.load(0), r.load(1), r3.load(1)]);
      assert.deepEqual(r3.slice(1, last, 'probs'), r.slice(1, last, 'probs'));
      assert.deepEqual(r3.slice(1, 1, 'c2p'), r.slice(1, 1, 'c2p'));
    } finally {
      await model.dispose();
    }
  });

  it("keeps no output file: a run's outputs are read at once, results own no files, however many are dropped", async () => {
    const mine = () => fs.readdirSync(SPILL_DIR).filter((f) => f.startsWith(`deberta-lens-${process.pid}-`)).length;
    const model = await openModel(V3, { cacheDir });
    try {
      for (let k = 0; k < 20; k++) {
        const r = await model.explain({ text: `sentence number ${k} of a run of results nobody releases` });
        await r.load(k % 2);
      }
      assert.ok(spillFilesHeld() <= MAX_SPARES, `held ${spillFilesHeld()}`);
      assert.ok(mine() <= MAX_SPARES, `${mine()} files in ${SPILL_DIR}`);
    } finally {
      await model.dispose();
    }
  });

  it("keeps each result's layer input states in the runtime process, within a byte limit, and drops them with the result", async () => {
    const model = await openModel(V3, { cacheDir });
    try {
      const session = model.session;
      const D = 32; // v3_tiny's hidden size
      const text = 'first result with a few tokens';
      const a = await model.explain({ text });
      const stateBytes = (r: { n: number }) => a.layers.length * r.n * D * 4;
      // The forward pass left every layer's input state in the runtime process: a layer's runs read it there.
      assert.equal(session.keptStateBytes, stateBytes(a));
      const a1 = Float32Array.from((await a.load(1)).probs);
      // No room beside the run at hand: a later result pushes the earlier ones' states out.
      session.keptStatesLimit = 1;
      const b = await model.explain({ text });
      const bKeys = session.keptStateKeys();
      assert.equal(bKeys.length, a.layers.length);
      assert.equal(session.keptStateBytes, stateBytes(b));
      const c = await model.explain({ text: 'another text' });
      assert.equal(session.keptStateBytes, stateBytes(c));
      // A layer whose state was pushed out gets it sent with its run (pushing c's out): the same numbers.
      assert.deepEqual((await b.load(1)).probs, a1);
      assert.equal(session.keptStateBytes, b.n * D * 4);
      // Releasing a result frees its states in the runtime process: a run that reads one fails there (as it does
      // for a state pushed out).
      const held = session.keptStateKeys();
      for (const r of [a, b, c]) r.release();
      assert.equal(session.keptStateBytes, 0);
      const none = { type: 'int64' as const, data: new BigInt64Array(0), dims: [0] };
      for (const key of [...held, bKeys[0]!])
        await rejectsWith(
          session.run('layer', { unused: none }, ['probs'], undefined, { sources: [], feeds: { hidden: { key } } }),
          'runtime',
          /kept tensor .* is missing/,
        );
    } finally {
      await model.dispose();
    }
  });

  it('bounds computed layers in bytes (the most recent always stays), recomputes evicted ones, and release frees a result', async () => {
    const model = await openModel(V3, { cacheDir });
    const limit = layerCache.limit;
    try {
      const a = await model.explain({ text: 'first result with a few tokens' });
      const b = await model.explain({ text: 'second result' });
      layerCache.setLimit(a.layerBytes + b.layerBytes); // room for one of a's layers (the longer result) and b's
      const a0 = Float32Array.from(await a.load(0).then((t) => t.probs));
      await a.load(1);
      await b.load(0);
      assert.equal(a.isLoaded(0), false, 'the least recent layer was evicted');
      assert.equal(a.isLoaded(1) && b.isLoaded(0), true, 'the most recent ones stay');
      assert.ok(layerCache.bytes <= a.layerBytes + b.layerBytes);
      layerCache.setLimit(1); // below one layer: the most recent still stays
      assert.equal(b.isLoaded(0), true);
      assert.equal(a.isLoaded(1), false);
      await b.load(1); // room is made before computing: b's layer 0 is let go first
      assert.deepEqual([b.isLoaded(0), b.isLoaded(1)], [false, true]);
      layerCache.setLimit(2 * a.layerBytes + b.layerBytes);
      assert.deepEqual((await a.load(0)).probs, a0, 'an evicted layer is recomputed to the same numbers');
      a.release();
      assert.equal(a.released, true);
      assert.throws(() => a.tensor(1, 'probs'), /not loaded/);
      await rejectsWith(a.load(1), 'runtime', /released/);
      assert.equal(b.isLoaded(1), true, 'releasing one result leaves the others');
    } finally {
      layerCache.setLimit(limit);
      await model.dispose();
    }
  });

  it('the runtime process exits when its parent is killed', async () => {
    const script = path.join(tmp, 'parent.js');
    const engine = path.resolve(__dirname, '../../src/engine/index.js');
    fs.writeFileSync(
      script,
      `const e = require(${JSON.stringify(engine)});
       e.openModel(${JSON.stringify(V3)}, { cacheDir: ${JSON.stringify(cacheDir)} }).then((m) => {
         process.stdout.write(String(m.session.pid) + '\\n');
         setInterval(() => {}, 1000);
       });`,
    );
    const parent = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      parent.once('exit', (code) => reject(new Error(`the parent exited early (${code})`)));
    });
    assert.ok(alive(pid), 'the runtime process runs');
    parent.kill('SIGKILL');
    const t0 = Date.now();
    while (alive(pid) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(pid), false, 'the runtime process outlived its parent');
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('memory: a length that would not fit is refused before anything runs', () => {
  it('names the length, the estimate and the setting', async () => {
    const model = await openModel(V3, { cacheDir, maxTokensName: 'debertaLens.maxTokens' });
    try {
      const need = estimateMemory(model.checkpoint.spec, 3000).total;
      assert.throws(
        () => checkLength(model, 3000, need - 1),
        (e: unknown) =>
          isLensError(e) && e.code === 'too-long' && /3000 tokens.*needs about .*(MB|GB).*free.*debertaLens\.maxTokens/.test(e.message),
      );
      assert.doesNotThrow(() => checkLength(model, 3000, need + 1));
      // v3-large at 2048 tokens: the forward pass dominates, a few GB, not the 25 GB of keeping every layer.
      const large = {
        ...model.checkpoint.spec,
        numLayers: 24,
        numHeads: 16,
        hiddenSize: 1024,
        intermediateSize: 4096,
        allHeadSize: 1024,
        headDim: 64,
      };
      const est = estimateMemory(large, 2048);
      assert.ok(est.total < 4 * 2 ** 30 && est.states === 24 * 2048 * 1024 * 4, `${est.total}`);
    } finally {
      await model.dispose();
    }
  });
});

describe('bad input to explain: a LensError, no crash, no hang', () => {
  it('absolute-position models refuse inputs longer than their position table', async () => {
    const model = await openModel(V2, { cacheDir });
    try {
      await rejectsWith(model.explain({ ids: Array.from({ length: 100 }, () => 5) }), 'too-long', /positions for only 64/);
    } finally {
      await model.dispose();
    }
  });

  it('ids out of the vocabulary, empty ids, empty text, too many tokens, both inputs', async () => {
    const model = await openModel(V3, { cacheDir, maxTokens: 64 });
    try {
      await rejectsWith(model.explain({ ids: [1, 160, 2] }), 'invalid-input', /160.*vocabulary \(0…159\)/);
      await rejectsWith(model.explain({ ids: [1, -1, 2] }), 'invalid-input', /-1/);
      await rejectsWith(model.explain({ ids: [] }), 'invalid-input', /empty/);
      await rejectsWith(model.explain({ text: '' }), 'invalid-input', /empty/);
      await rejectsWith(model.explain({ text: ' \n\t ' }), 'invalid-input', /empty/);
      await rejectsWith(model.explain({ text: 'word '.repeat(100) }), 'too-long', /over the limit of 64/);
      await rejectsWith(model.explain({ text: 'a', ids: [1] }), 'invalid-input', /either text or ids/);
      await rejectsWith(model.explain({ text: 'a', layers: [2] }), 'invalid-input', /layer 2/);
    } finally {
      await model.dispose();
    }
  });

  it('a folder without tokenizer files explains ids but says what is missing for text', async () => {
    const dir = path.join(tmp, 'no-tokenizer');
    fs.mkdirSync(dir);
    for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(V3, f), path.join(dir, f));
    const model = await openModel(dir, { cacheDir });
    try {
      assert.equal(at((await model.explain({ ids: [1, 5, 2] })).tokens, 1).text, '#5');
      await rejectsWith(model.explain({ text: 'hello' }), 'not-found', /no tokenizer/);
    } finally {
      await model.dispose();
    }
  });
});

describe('spill files of worker threads', () => {
  it("a worker thread's files have names of their own, and its exit deletes none of the main thread's", () => {
    // A fresh process: the main thread's first file and a worker thread's first file (the atlas thread's case).
    const spill = path.join(__dirname, '../../src/engine/runtime/spill.js');
    const script = `
      const { Worker } = require('node:worker_threads');
      const fs = require('node:fs');
      const { takeSpillPath } = require(${JSON.stringify(spill)});
      const mine = takeSpillPath();
      const w = new Worker(\`require('node:worker_threads').parentPort.postMessage(require(\${JSON.stringify(${JSON.stringify(spill)})}).takeSpillPath())\`, { eval: true });
      w.once('message', (theirs) => w.once('exit', () => {
        console.log(JSON.stringify({ mine, theirs, mineExists: fs.existsSync(mine) }));
        fs.rmSync(mine, { force: true });
      }));
    `;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    const got = JSON.parse(r.stdout) as { mine: string; theirs: string; mineExists: boolean };
    assert.notEqual(got.theirs, got.mine, r.stderr);
    assert.match(path.basename(got.theirs), /^deberta-lens-\d+-t\d+-1\.bin$/);
    assert.equal(got.mineExists, true, "the main thread's file outlives the worker");
  });
});
