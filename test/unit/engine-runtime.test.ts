// The engine around the graph: execution-provider fallback, cancellation, graph cache, long inputs, bad inputs.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { isLensError } from '../../src/engine/errors';
import { openModel } from '../../src/engine/model';
import type { ExplainResult } from '../../src/engine/result';
import { providerOrder } from '../../src/engine/runtime/execution-providers';
import { SPILL_DIR } from '../../src/engine/runtime/spill';
import { FIXTURES } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const V2 = path.join(FIXTURES, 'deberta', 'v2_tiny');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-runtime-'));
const cacheDir = path.join(tmp, 'cache');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function rejectsWith(p: Promise<unknown>, code: string, pattern: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isLensError(e), `expected a LensError, got ${inspect(e)}`);
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    return true;
  });
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

  it('reuses a released result\'s output file for the next run without mixing results', async () => {
    const mine = () => new Set(fs.readdirSync(SPILL_DIR).filter((f) => f.startsWith(`deberta-lens-${process.pid}-`)));
    const model = await openModel(V3, { cacheDir });
    const all = (r: ExplainResult) => r.layers.flatMap((l) => [...r.terms, 'probs' as const].map((k) => r.tensor(l, k)));
    try {
      const long = await model.explain({ text: 'a longer sentence than the next one, so its file is the bigger' });
      const longData = all(long); // every tensor read: the file is handed back as a spare
      const before = mine();
      const short = await model.explain({ text: 'short text' }); // written into the spare, not truncated
      assert.deepEqual(mine(), before, 'the spare file was reused');
      const again = await model.explain({ text: 'short text' }); // the spare is taken: a new file
      assert.equal(mine().size, before.size + 1);
      assert.deepEqual(all(short), all(again));
      assert.deepEqual(all(long), longData, 'tensors read before the hand-back stay with their result');
      const last = await model.explain({ text: 'short text' });
      const c2c = last.tensor(0, 'c2c');
      last.release();
      assert.equal(last.tensor(0, 'c2c'), c2c, 'what was read stays');
      assert.throws(() => last.tensor(1, 'c2c'), /released/);
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
      assert.equal((await model.explain({ ids: [1, 5, 2] })).tokens[1].text, '#5');
      await rejectsWith(model.explain({ text: 'hello' }), 'not-found', /no tokenizer/);
    } finally {
      await model.dispose();
    }
  });
});
