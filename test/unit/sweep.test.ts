// The head ranking against Hugging Face's own numbers: every (layer, head, term) cell removed alone by hooks in
// HF's DebertaV2ForMaskedLM (sweep_ablation.json, sweep_cases.json, tools/fixtures/make-sweep-cases.py), and the
// CLI's shape, its one-line refusals, and cancelling.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { SweepResult } from '../../src/engine/api';
import { sweepTerms } from '../../src/engine/run/sweep';
import { assertOneLineError } from './head-asserts';
import { FIXTURES, REPO_ROOT, at } from './helpers';

interface Cell {
  layer: number;
  head: number;
  term: string;
  logprob_after: number;
  rank_after: number;
  top1_after: number;
  kl: number;
}
interface SweepCase {
  name?: string;
  input_ids: number[];
  position: number;
  mode: 'zero' | 'mean';
  target: number;
  logprob_before: number;
  rank_before: number;
  cells: Cell[];
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-sweep-'));
const cacheDir = path.join(tmp, 'cache');
const fixture = (name: string) => path.join(FIXTURES, 'deberta', name);
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Every cell of the engine's sweep against HF's: log-probability ≤ 1e-4, rank and first choice exact. */
function assertSweep(r: SweepResult, want: SweepCase, what: string): void {
  assert.equal(r.position, want.position, `${what}: position`);
  assert.equal(r.followed!.id, want.target, `${what}: followed token`);
  assert.ok(
    Math.abs(r.followed!.before.logprob - want.logprob_before) <= 1e-4,
    `${what}: log-prob before ${r.followed!.before.logprob} vs ${want.logprob_before}`,
  );
  assert.equal(r.followed!.before.rank, want.rank_before, `${what}: rank before`);
  assert.equal(r.ranking.length, want.cells.length, `${what}: one cell per layer × head × term`);
  for (const c of want.cells) {
    const got = r.ranking.find((x) => x.layer === c.layer && x.head === c.head && x.term === c.term);
    const cell = `${what} ${c.layer}.${c.head}:${c.term}`;
    assert.ok(got, `${cell}: missing`);
    assert.ok(
      Math.abs(got.logprob_after! - c.logprob_after) <= 1e-4,
      `${cell}: log-prob after ${got.logprob_after!} vs HF ${c.logprob_after}`,
    );
    assert.ok(Math.abs(got.drop - (want.logprob_before - c.logprob_after)) <= 2e-4, `${cell}: drop`);
    assert.equal(got.rank_after, c.rank_after, `${cell}: rank after`);
    assert.equal(got.top1_after!.id, c.top1_after, `${cell}: first choice after`);
    assert.ok(Math.abs(at(at(r.grid[got.term]!, c.layer), c.head) - got.drop) < 1e-12, `${cell}: grid = ranking`);
  }
  for (let k = 1; k < r.ranking.length; k++)
    assert.ok(at(r.ranking, k - 1).drop >= at(r.ranking, k).drop, `${what}: ranking sorted by drop`);
}

describe('sweep: every cell against HF', () => {
  it('bundled model, samples/ablation.md, all 96 cells (zero): "him" loses most without 2.1:c2p, 1.1:p2c, 1.1:c2p', async () => {
    const want: SweepCase & { text: string } = JSON.parse(
      fs.readFileSync(path.join(FIXTURES, 'default-model', 'sweep_ablation.json'), 'utf8'),
    );
    const model = await open(path.join(REPO_ROOT, 'models', 'default'));
    try {
      const seen: number[] = [];
      const r = await model.sweep({ text: want.text, terms: ['all'], onProgress: (p) => seen.push(p.done) });
      assert.deepEqual(r.input_ids, want.input_ids);
      assert.equal(r.followed!.token, '▁him');
      assert.equal(r.source, 'input');
      assertSweep(r, want, 'bundled');
      assert.deepEqual(
        r.ranking.slice(0, 3).map((c) => `${c.layer}.${c.head}:${c.term}`),
        ['2.1:c2p', '1.1:p2c', '1.1:c2p'],
      );
      assert.deepEqual(
        seen,
        Array.from({ length: 97 }, (_, k) => k),
        'progress after every cell, from 0',
      );
    } finally {
      await model.dispose();
    }
  });

  it('v3_tiny_mlm_cls: the second [MASK] of mask2 (zero), and position 3 of mask1 masked first (mean, the original followed); batched and one rerun per cell', async () => {
    const data: { cases: SweepCase[] } = JSON.parse(fs.readFileSync(path.join(fixture('v3_tiny_mlm_cls'), 'sweep_cases.json'), 'utf8'));
    const model = await open(fixture('v3_tiny_mlm_cls'));
    try {
      for (const c of data.cases.flatMap((x) => [
        { ...x, batch: true },
        { ...x, batch: false },
      ])) {
        const r = await model.sweep({ ids: c.input_ids, terms: ['c2p', 'p2c', 'c2c'], position: c.position, mode: c.mode, batch: c.batch });
        assert.equal(r.mode, c.mode);
        assert.equal(r.source, c.mode === 'mean' ? 'masked' : 'input');
        assert.equal(r.followed!.which, c.mode === 'mean' ? 'original' : 'top1_before');
        assertSweep(r, c, `${c.name!} (batch ${c.batch})`);
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('sweep: terms, cancel', () => {
  it("sweepTerms: all = the model's terms; a term the model lacks or an unknown one is refused in one line", () => {
    assert.deepEqual(sweepTerms(['all'], ['c2c', 'c2p', 'p2c']), ['c2c', 'c2p', 'p2c']);
    assert.deepEqual(sweepTerms(['p2c', 'c2p', 'p2c'], ['c2c', 'c2p', 'p2c']), ['p2c', 'c2p']);
    assert.throws(() => sweepTerms(['p2c'], ['c2c', 'c2p']), /--sweep p2c: this model has no p2c term \(its terms: c2c, c2p\)/);
    assert.throws(() => sweepTerms(['c2x'], ['c2c']), /--sweep term "c2x" is not c2c, c2p, p2c or all/);
  });

  it('an abort while a rerun is in flight rejects with "cancelled", and the next sweep on the same model runs', async () => {
    const model: OpenModel = await open(fixture('v3_tiny_mlm_cls'));
    try {
      const controller = new AbortController();
      const ids = [1, 17, 21, 16, 57, 23, 60, 4, 22, 60, 26, 18, 27, 5, 2];
      const run = model.sweep(
        { ids, terms: ['all'], onProgress: ({ done }) => void (done === 3 && setTimeout(() => controller.abort(), 0)) },
        controller.signal,
      );
      await assert.rejects(run, /cancelled/);
      const r = await model.sweep({ ids, terms: ['c2p'] });
      assert.equal(r.ranking.length, 8);
    } finally {
      await model.dispose();
    }
  });
});

describe('deberta-lens ablate --sweep', () => {
  const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
  const cliCache = path.join(tmp, 'cli-cache');
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, 'ablate', '--threads', '2', ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: cliCache },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('no [MASK] and no --position, a term the model lacks, no MLM head, --sweep with --ablate: one line each, nothing built', () => {
    const c2pOnly = path.join(tmp, 'c2p-only');
    fs.cpSync(fixture('v3_tiny_mlm_cls'), c2pOnly, { recursive: true });
    const config = JSON.parse(fs.readFileSync(path.join(c2pOnly, 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(c2pOnly, 'config.json'), JSON.stringify({ ...config, pos_att_type: 'c2p' }));
    const tiny = ['--model', fixture('v3_tiny_mlm_cls')];
    assertOneLineError(
      cli('--model', c2pOnly, '--text', 'attention to [MASK] terms', '--sweep', 'p2c'),
      /--sweep p2c: this model has no p2c term \(its terms: c2c, c2p\)/,
    );
    assertOneLineError(
      cli('--model', fixture('v3_tiny_rtd'), '--text', 'attention to [MASK] terms', '--sweep', 'c2p'),
      /no masked-LM head/,
    );
    assertOneLineError(
      cli(...tiny, '--text', 'attention to [MASK] terms', '--sweep', 'c2p', '--ablate', '0.0:c2p'),
      /--sweep and --ablate are two different runs/,
    );
    assertOneLineError(
      cli(...tiny, '--text', 'attention to [MASK] terms', '--sweep', 'c2p', '--positions', '2'),
      /--positions does not apply to --sweep/,
    );
    assert.equal(fs.existsSync(path.join(cliCache, 'deberta-lens')), false, 'no graph was built');
    assertOneLineError(cli(...tiny, '--text', 'attention to terms', '--sweep', 'all'), /no \[MASK\] token and no position was given/);
    assertOneLineError(cli(...tiny, '--text', 'attention to terms', '--sweep', 'all', '--position', '40'), /position 40 does not exist/);
  });

  it('prints grid per term ([layers][heads]) and the ranking; --position masks that token and follows the original', () => {
    const r = cli(
      '--model',
      fixture('v3_tiny_mlm_cls'),
      '--ids',
      '1,17,4,29,6,10,60,37,13,17,4,29,6,10,40,22,38,4,27,8,43,15,2',
      '--sweep',
      'c2p,p2c',
      '--position',
      '3',
      '--mean',
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.position, 3);
    assert.equal(out.mode, 'mean');
    assert.equal(out.source, 'masked');
    assert.deepEqual(out.terms, ['c2p', 'p2c']);
    assert.deepEqual(Object.keys(out.grid), ['c2p', 'p2c']);
    for (const t of ['c2p', 'p2c']) assert.deepEqual([out.grid[t].length, out.grid[t][0].length], [2, 4]);
    assert.equal(out.followed.which, 'original');
    assert.equal(out.followed.id, 29);
    assert.equal(out.ranking.length, 16);
    const want: { cases: SweepCase[] } = JSON.parse(fs.readFileSync(path.join(fixture('v3_tiny_mlm_cls'), 'sweep_cases.json'), 'utf8'));
    const hf = want.cases.find((c) => c.name === 'mask1_position3')!;
    for (const c of out.ranking) {
      const w = hf.cells.find((x) => x.layer === c.layer && x.head === c.head && x.term === c.term)!;
      assert.ok(Math.abs(c.logprob_after - w.logprob_after) <= 1e-4, `${c.layer}.${c.head}:${c.term}`);
    }
  });
});
