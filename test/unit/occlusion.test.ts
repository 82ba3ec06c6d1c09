// Token attribution by occlusion against Hugging Face's own numbers: each non-special token masked or removed alone
// and HF's model run on those ids (test/data/fixtures/occlusion/cases.json, tools/fixtures/make-occlusion-cases.py),
// batched and one variant at a time; the refusals; the `attribute` command line.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { OcclusionResult } from '../../src/engine/api';
import { batchSizes, variantsPerRun } from '../../src/engine/run/occlusion-batch';
import { assertOneLineError } from './head-asserts';
import { at, FIXTURES, REPO_ROOT, rejectsWith } from './helpers';

interface Occluded {
  position: number;
  mask: number;
  remove: number | null;
}
interface Case {
  name: string;
  model: string;
  text: string | null;
  pair: string | null;
  input_ids: number[];
  mask_id: number;
  before: number;
  kind: 'label' | 'span' | 'token';
  label?: number;
  position?: number;
  start_token?: number;
  end_token?: number;
  token?: number;
  occluded: Occluded[];
  /** Groups of positions taken out together (a word's pieces). */
  occluded_groups?: { positions: number[]; mask: number; remove: number | null }[];
}

const CASES: Case[] = (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'occlusion', 'cases.json'), 'utf8')) as { cases: Case[] }).cases;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-occlusion-'));
const cacheDir = path.join(tmp, 'cache');
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const near = (got: number | null, want: number, what: string, tol = 1e-4) => {
  assert.ok(got !== null, `${what}: null`);
  assert.ok(Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);
};

function inputOf(c: Case) {
  return c.text !== null ? { text: c.text, ...(c.pair !== null ? { pair: c.pair } : {}) } : { ids: c.input_ids };
}

/** Every occluded position's value after each method, and the scores, against HF's. */
function assertCase(r: OcclusionResult, c: Case, what: string): void {
  assert.deepEqual(r.input_ids, c.input_ids, `${what}: ids`);
  near(r.before, c.before, `${what}: before`);
  if (c.kind === 'label') assert.deepEqual([r.target.kind, 'id' in r.target && r.target.id], ['label', c.label], `${what}: target`);
  if (c.kind === 'span') assert.deepEqual(r.target, { ...r.target, kind: 'span', start_token: c.start_token, end_token: c.end_token });
  if (c.kind === 'token') assert.deepEqual([r.target.kind, 'id' in r.target && r.target.id], ['token', c.token], `${what}: target`);
  for (const method of ['mask', 'remove'] as const) {
    const m = r.methods[method]!;
    assert.equal(m.scores.length, c.input_ids.length, `${what} ${method}: one score per token`);
    const want = new Map(c.occluded.flatMap((o) => (o[method] === null ? [] : [[o.position, o[method]]])));
    m.scores.forEach((s, i) => {
      const w = want.get(i);
      if (w === undefined) return assert.equal(s, null, `${what} ${method} ${i}: no score (special or followed)`);
      near(m.after[i]!, w, `${what} ${method} ${i}: value after`);
      near(s, c.before - w, `${what} ${method} ${i}: score`, 2e-4);
    });
  }
}

describe('occlusion against HF', () => {
  const models = new Map<string, Promise<OpenModel>>();
  const model = (c: Case) => {
    let m = models.get(c.model);
    if (!m) models.set(c.model, (m = open(path.join(FIXTURES, c.model))));
    return m;
  };
  after(async () => Promise.all([...models.values()].map(async (m) => (await m).dispose())));

  for (const c of CASES) {
    it(`${c.name}: every token masked and removed, batched and one by one, equal HF's (${c.occluded.length} positions)`, async () => {
      const m = await model(c);
      const opts = { ...inputOf(c), ...(c.kind === 'label' && c.position !== undefined ? { position: c.position } : {}) };
      const seen: number[] = [];
      const batched = await m.occlude({ ...opts, onProgress: (p) => seen.push(p.done) });
      assertCase(batched, c, `${c.name} batched`);
      const variants = c.occluded.length + c.occluded.filter((o) => o.remove !== null).length;
      assert.equal(batched.timings.variants, variants);
      // BERT: no batched graph covers it, so one forward pass per variant whatever was asked.
      const covered = c.name !== 'bert_seqcls';
      assert.equal(batched.timings.batched, covered);
      assert.ok(covered ? batched.timings.runs < variants : batched.timings.runs === variants, 'runs');
      assert.equal(at(seen, seen.length - 1), variants, 'progress reaches the total');
      const single = await m.occlude({ ...opts, batch: false });
      assertCase(single, c, `${c.name} one by one`);
      assert.equal(single.timings.runs, variants);
      assert.equal(single.timings.batch_size, 1);
      for (const method of ['mask', 'remove'] as const)
        batched.methods[method]!.scores.forEach((s, i) => {
          const o = at(single.methods[method]!.scores, i);
          if (s === null || o === null) return assert.equal(s, o);
          assert.ok(Math.abs(s - o) <= 1e-4, `${c.name} ${method} ${i}: batched ${s} vs one by one ${o}`);
        });
    });
  }

  for (const c of CASES.filter((x) => x.occluded_groups)) {
    const groups = c.occluded_groups!;
    it(`${c.name}: words (groups of 1–3 pieces) masked and removed together, batched and one by one, equal HF's`, async () => {
      const m = await model(c);
      const opts = { ...inputOf(c), ...(c.kind === 'label' && c.position !== undefined ? { position: c.position } : {}) };
      // [CLS] as a group of its own: left out, as special tokens are.
      const asked = [[0], ...groups.map((g) => g.positions)];
      for (const batch of [true, false]) {
        const r = await m.occlude({ ...opts, groups: asked, batch });
        const what = `${c.name} ${batch ? 'batched' : 'one by one'}`;
        assert.deepEqual(r.groups, asked, `${what}: the groups echoed`);
        near(r.before, c.before, `${what}: before`);
        for (const method of ['mask', 'remove'] as const) {
          const m2 = r.methods[method]!;
          assert.equal(at(m2.scores, 0), null, `${what} ${method}: [CLS] not scored`);
          for (const g of groups)
            for (const p of g.positions) {
              const want = g[method];
              if (want === null) assert.equal(at(m2.scores, p), null, `${what} ${method} ${p}: a removed followed row`);
              else near(at(m2.scores, p), c.before - want, `${what} ${method} [${g.positions.join(',')}] at ${p}`, 2e-4);
            }
        }
        const variants = groups.length + groups.filter((g) => g.remove !== null).length;
        assert.equal(r.timings.variants, variants, `${what}: one variant a group and method`);
        if (batch && c.name !== 'bert_seqcls') assert.ok(r.timings.runs < variants, `${what}: batched by length`);
      }
    });
  }

  it('refuses groups that name no token, a missing position, or a token twice', async () => {
    const c = CASES.find((x) => x.name === 'seqcls_pair')!;
    const m = await model(c);
    const input = { text: c.text!, pair: c.pair! };
    await rejectsWith(m.occlude({ ...input, groups: [[1], []] }), 'invalid-input', /occlusion group 1 is empty/);
    await rejectsWith(m.occlude({ ...input, groups: [[1, 99]] }), 'invalid-input', /group 0 names position 99, which does not exist/);
    await rejectsWith(m.occlude({ ...input, groups: [[1, 2], [2]] }), 'invalid-input', /position 2 is in two occlusion groups/);
  });

  it('attention in head groups (4 heads as 3 + 1, EngineOptions.attentionHeadGroup): the same numbers', async () => {
    const c = CASES.find((x) => x.name === 'seqcls_pair')!;
    const m = await openModel(path.join(FIXTURES, c.model), { cacheDir, executionProvider: 'cpu', threads: 2, attentionHeadGroup: 3 });
    try {
      const r = await m.occlude({ text: c.text!, pair: c.pair! });
      assert.equal(r.timings.batched, true);
      assertCase(r, c, 'groups of 3');
    } finally {
      await m.dispose();
    }
  });

  it('cancelling between batches rejects with cancelled; the next occlusion starts a fresh process, same numbers', async () => {
    const c = at(CASES, 0);
    const m = await model(c);
    const controller = new AbortController();
    const run = m.occlude({ text: c.text!, onProgress: (p) => p.done > 0 && controller.abort() }, controller.signal);
    await rejectsWith(run, 'cancelled', /cancelled/);
    assertCase(await m.occlude({ text: c.text! }), c, 'after a cancel');
  });

  it('one method alone gives the same scores; a removal of the followed token is no score', async () => {
    const c = CASES.find((x) => x.name === 'tokcls')!;
    const m = await model(c);
    const r = await m.occlude({ text: c.text!, position: c.position, methods: ['remove'] });
    assert.deepEqual(Object.keys(r.methods), ['remove']);
    assert.equal(at(r.methods.remove!.scores, c.position!), null);
    assert.equal(r.timings.variants, c.occluded.length - 1);
  });
});

describe('occlusion: refusals', () => {
  it('refuses what does not fit the head, before anything runs', async () => {
    const seq = await open(path.join(FIXTURES, 'task-heads', 'v3_seqcls_3'));
    try {
      await rejectsWith(seq.occlude({ text: 'the cat', position: 1 }), 'invalid-input', /reads the whole input.*drop the position/);
      await rejectsWith(seq.occlude({ text: 'the cat', target: { label: 'happy' } }), 'invalid-input', /not one of this head's labels/);
      await rejectsWith(seq.occlude({ text: 'the cat', target: { token: 3 } }), 'invalid-input', /name a label/);
      await rejectsWith(seq.occlude({ text: 'the cat', methods: [] }), 'invalid-input', /no occlusion method/);
      await rejectsWith(seq.occlude({ text: 'the cat', methods: ['blur' as 'mask'] }), 'invalid-input', /"blur" is not mask or remove/);
      await rejectsWith(seq.occlude({ text: 'the cat', position: 9 }), 'invalid-input', /position 9 does not exist/);
    } finally {
      await seq.dispose();
    }
    const tok = await open(path.join(FIXTURES, 'task-heads', 'v3_tokcls'));
    try {
      await rejectsWith(tok.occlude({ text: 'alice went' }), 'invalid-input', /name its position/);
    } finally {
      await tok.dispose();
    }
    const mc = await open(path.join(FIXTURES, 'task-heads', 'v3_mc'));
    try {
      await rejectsWith(mc.occlude({ text: 'pick one' }), 'invalid-input', /multiple-choice head is not supported/);
    } finally {
      await mc.dispose();
    }
    const mlm = await open(path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls'));
    try {
      await rejectsWith(mlm.occlude({ text: 'attention to terms' }), 'invalid-input', /no \[MASK\] token and no position/);
    } finally {
      await mlm.dispose();
    }
  });

  it('without a mask id (ids, no tokenizer files) only remove runs, and mask is refused', async () => {
    const dir = path.join(tmp, 'no-tokenizer');
    fs.mkdirSync(dir);
    for (const f of ['config.json', 'model.safetensors'])
      fs.copyFileSync(path.join(FIXTURES, 'task-heads', 'v3_seqcls_3', f), path.join(dir, f));
    const c = at(CASES, 0);
    const m = await open(dir);
    try {
      await rejectsWith(m.occlude({ ids: c.input_ids, methods: ['mask'] }), 'invalid-input', /needs a \[MASK\] token.*use --method remove/);
      const r = await m.occlude({ ids: c.input_ids });
      assert.deepEqual(Object.keys(r.methods), ['remove']);
      assert.match(at(r.notes!, 0), /mask left out/);
      assert.equal(r.mask_id, null);
      // No tokenizer: no token is known to be special, so every position is scored, the [CLS] and [SEP] too.
      const want = new Map(c.occluded.map((o) => [o.position, o.remove!]));
      r.methods.remove!.scores.forEach((s, i) => want.has(i) && near(s, c.before - want.get(i)!, `remove ${i}`, 2e-4));
    } finally {
      await m.dispose();
    }
  });
});

describe('occlusion: batch sizes', () => {
  it('bounded by memory and by 32, split evenly', () => {
    const base = { numHeads: 12, intermediateSize: 3072, hiddenSize: 768 } as Parameters<typeof variantsPerRun>[0];
    assert.equal(variantsPerRun(base, 16), 32, 'short inputs: the most a run takes');
    // 128 tokens: the feed-forward array [V·n, 3072] stays under 24 MiB (16 · 128 · 3072 · 4 B = 24 MiB).
    assert.equal(variantsPerRun(base, 128), 16);
    assert.equal(variantsPerRun(base, 512), 3, "512 tokens: a head group's [V·4, n, 2n] attention arrays");
    assert.equal(variantsPerRun(base, 4096), 1, 'long inputs: one variant a run');
    assert.deepEqual(batchSizes(128, 28), [26, 26, 26, 25, 25]);
    assert.deepEqual(batchSizes(64, 32), [32, 32]);
    assert.deepEqual(batchSizes(0, 28), []);
    assert.deepEqual(batchSizes(5, 1), [1, 1, 1, 1, 1]);
  });
});

describe('attribute (CLI)', () => {
  const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, 'attribute', '--threads', '2', ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cli-cache') },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const seqcls = ['--model', path.join(FIXTURES, 'task-heads', 'v3_seqcls_3')];

  it('prints the scores of both methods as JSON, equal to HF', () => {
    const c = at(CASES, 0);
    const r = cli(...seqcls, '--text', c.text!, '--target', `label:${c.label}`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.task, 'sequence-classification');
    assert.deepEqual(out.input_ids, c.input_ids);
    assert.equal(out.tokens.length, c.input_ids.length);
    assert.equal(out.target.id, c.label);
    for (const o of c.occluded) {
      near(out.methods.mask.scores[o.position], c.before - o.mask, `mask ${o.position}`, 2e-4);
      near(out.methods.remove.scores[o.position], c.before - o.remove!, `remove ${o.position}`, 2e-4);
    }
    assert.equal(out.methods.mask.scores[0], null, '[CLS] has no score');
    assert.ok(out.timings.batch_size > 1);
  });

  it('--method mask --no-batch: one method, one variant a run', () => {
    const c = at(CASES, 0);
    const r = cli(...seqcls, '--text', c.text!, '--method', 'mask', '--no-batch');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out.methods), ['mask']);
    assert.equal(out.timings.batch_size, 1);
  });

  it("--words: each word taken out whole, every piece holding its word's score; one variant a word and method", () => {
    const r = cli(...seqcls, '--text', 'the catalogue sat unbelievably.', '--words');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      tokens: { token: string; special: boolean }[];
      groups: number[][];
      methods: Record<'mask' | 'remove', { scores: (number | null)[] }>;
      timings: { variants: number };
    };
    // "catalogue" and "unbelievably" are many pieces each in the fixture's small vocabulary.
    const words = out.groups.filter((g) => !out.tokens[g[0]!]!.special);
    assert.deepEqual(
      words.map((g) => g.map((i) => out.tokens[i]!.token).join('')),
      ['▁the', '▁catalogue', '▁sat', '▁unbelievably', '.'],
    );
    for (const method of ['mask', 'remove'] as const)
      for (const g of words) {
        const s = out.methods[method].scores;
        assert.ok(typeof s[g[0]!] === 'number', `${method}: "${g.join(',')}" scored`);
        for (const i of g) assert.equal(s[i], s[g[0]!], `${method}: every piece of a word holds its score`);
      }
    assert.equal(out.timings.variants, 2 * words.length);
    assertOneLineError(cli(...seqcls, '--text', 'the cat', '--words', '--identifiers'), /--words and --identifiers .* give one/);
  });

  it('refuses bad flags in one line', () => {
    assertOneLineError(cli(...seqcls, '--text', 'the cat', '--method', 'blur'), /--method takes mask, remove or both/);
    assertOneLineError(cli(...seqcls, '--text', 'the cat', '--target', 'colour:red'), /--target takes label:NAME/);
    assertOneLineError(cli(...seqcls, '--text', 'the cat', '--position', '-1'), /--position takes a token index/);
    assertOneLineError(cli(...seqcls, '--text', 'the cat', '--position', '1'), /drop the position/);
    assertOneLineError(cli(...seqcls), /give exactly one of --text, --file or --ids/);
  });
});
