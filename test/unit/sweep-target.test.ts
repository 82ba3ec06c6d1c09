// The head ranking aimed at a task head's decision (issue 23): each single-cell ablation the task-head fixtures hold
// (HF's float64 logits with that one head's term zeroed) against the same cell of the sweep, for every label as the
// target; QA's span cells against the engine's own intervention; the refusals, in the engine and the CLI.
// Tolerance: |got − want| ≤ 1e-4 + 1e-4·|want|.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { SweepResult } from '../../src/engine/api';
import { openModel } from '../../src/engine/model/open-model';
import { assertOneLineError } from './head-asserts';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-sweep-target-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dirOf = (name: string) => path.join(FIXTURES, 'task-heads', name);
const open = (dir: string) => openModel(dir, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 2 });

/* eslint-disable @typescript-eslint/no-explicit-any -- the fixtures' JSON is read untyped */
const expectedOf = (name: string): any => JSON.parse(fs.readFileSync(path.join(dirOf(name), 'expected_outputs.json'), 'utf8'));

const worst = { abs: 0, rel: 0 };
after(() => console.log(`sweep-target vs HF: max abs ${worst.abs.toExponential(2)}, max rel ${worst.rel.toExponential(2)}`));
function close(got: number | undefined, want: number, what: string): void {
  assert.ok(got !== undefined, `${what}: missing`);
  const abs = Math.abs(got - want);
  assert.ok(abs <= 1e-4 + 1e-4 * Math.abs(want), `${what}: got ${got}, want ${want}`);
  worst.abs = Math.max(worst.abs, abs);
  worst.rel = Math.max(worst.rel, abs / Math.max(Math.abs(want), 1e-12));
}

/** The ranking's own consistency: drop = before − after per cell, sorted by drop, grid = ranking. */
function assertRanking(r: SweepResult, what: string): void {
  const before = r.target!.logit_before;
  for (const c of r.ranking) {
    assert.ok(Math.abs(c.drop - (before - c.logit_after!)) < 1e-9, `${what} ${c.layer}.${c.head}:${c.term}: drop`);
    assert.equal(at(at(r.grid[c.term]!, c.layer), c.head), c.drop, `${what}: grid = ranking`);
  }
  for (let k = 1; k < r.ranking.length; k++) assert.ok(at(r.ranking, k - 1).drop >= at(r.ranking, k).drop, `${what}: sorted by drop`);
}

/** The fixture's single-cell specs (one head, one term: exactly a sweep cell). */
const SINGLE = /^(\d+)\.(\d+):(c2c|c2p|p2c)$/;

describe('sweep with a task-head target: every single-cell fixture ablation = its sweep cell', () => {
  it('v3_seqcls_3: every label as the target (default: the predicted one); batched, and one rerun per cell once', async () => {
    const exp = expectedOf('v3_seqcls_3');
    const model = await open(dirOf('v3_seqcls_3'));
    let checked = 0;
    try {
      for (const c of exp.cases.filter((x: any) => x.name !== 'pair_padded4')) {
        const cells = exp.ablation.cases.filter((a: any) => a.case === c.name && SINGLE.test(a.ablate));
        const text = { text: c.text, ...(c.form === 'pair' ? { pair: c.text_pair } : {}) };
        const byDefault = await model.sweep({ ...text, terms: ['all'] });
        assert.equal(byDefault.task, 'sequence-classification');
        assert.equal(byDefault.target!.kind === 'label' && byDefault.target!.label, c.expected.predicted, `${c.name}: default = predicted`);
        for (let id = 0; id < exp.num_labels; id++) {
          const label = exp.id2label[String(id)];
          // One rerun per cell (the unbatched path) on one case and label: the same numbers, many more runs.
          for (const batch of c.name === 'single0' && id === 1 ? [true, false] : [true]) {
            const r = await model.sweep({ ...text, terms: ['all'], target: { label: id % 2 ? label : id }, batch });
            const what = `${c.name} ${label} batch ${batch}`;
            assert.deepEqual(r.input_ids, c.input_ids);
            assert.ok(r.target!.kind === 'label' && r.target!.id === id && r.target!.label === label, `${what}: target`);
            close(r.target!.logit_before, c.expected.logits[id], `${what} logit before`);
            assert.equal(r.ranking.length, 2 * 4 * 3);
            assertRanking(r, what);
            for (const a of cells) {
              const [, l, h, t] = SINGLE.exec(a.ablate)!;
              const cell = r.ranking.find((x) => x.layer === Number(l) && x.head === Number(h) && x.term === t)!;
              close(cell.logit_after, a.expected.logits[id], `${what} ${a.ablate} logit after`);
              close(cell.score_after, a.expected.scores[id], `${what} ${a.ablate} score after`);
              checked++;
            }
          }
        }
      }
    } finally {
      await model.dispose();
    }
    assert.ok(checked >= 2 * 3 * 4, `single-cell cells checked: ${checked}`);
  });

  it('v3_tokcls: every label as the target at one token per case, the default (its predicted label) at three', async () => {
    const exp = expectedOf('v3_tokcls');
    const model = await open(dirOf('v3_tokcls'));
    let checked = 0;
    try {
      for (const c of exp.cases) {
        const cells = exp.ablation.cases.filter((a: any) => a.case === c.name && SINGLE.test(a.ablate));
        if (cells.length === 0) continue;
        const text = { text: c.text, ...(c.form === 'pair' ? { pair: c.text_pair } : {}) };
        // Each sweep restarts its rerun processes (~1 s here): a few positions, not all of them.
        const n = c.input_ids.length;
        for (const p of [0, 3, n - 2]) {
          const def = await model.sweep({ ...text, terms: ['all'], position: p });
          assert.equal(def.target!.kind === 'label' && def.target!.label, c.expected.predicted[p], `${c.name} @${p}: default`);
          assert.equal(def.position, p);
          for (const a of cells) {
            const [, l, h, t] = SINGLE.exec(a.ablate)!;
            const cell = def.ranking.find((x) => x.layer === Number(l) && x.head === Number(h) && x.term === t)!;
            const id = def.target!.kind === 'label' ? def.target!.id : -1;
            close(cell.logit_after, a.expected.logits[p][id], `${c.name} @${p} default ${a.ablate}`);
            checked++;
          }
          if (p !== 3) continue;
          for (let id = 0; id < exp.num_labels; id++) {
            const r = await model.sweep({ ...text, terms: ['c2c', 'c2p', 'p2c'], position: p, target: { label: id } });
            const what = `${c.name} @${p} label ${id}`;
            assert.ok(r.target!.kind === 'label' && r.target!.position === p, `${what}: target position`);
            close(r.target!.logit_before, c.expected.logits[p][id], `${what} logit before`);
            assertRanking(r, what);
            for (const a of cells) {
              const [, l, h, t] = SINGLE.exec(a.ablate)!;
              const cell = r.ranking.find((x) => x.layer === Number(l) && x.head === Number(h) && x.term === t)!;
              close(cell.logit_after, a.expected.logits[p][id], `${what} ${a.ablate}`);
              checked++;
            }
          }
        }
      }
    } finally {
      await model.dispose();
    }
    assert.ok(checked > 0, 'some cells checked');
  });

  it("v3_qa: follows the predicted span (HF best_span); each cell = the intervention's start + end logit", async () => {
    const exp = expectedOf('v3_qa');
    const c = exp.cases.find((x: any) => x.form === 'pair');
    const model = await open(dirOf('v3_qa'));
    try {
      const r = await model.sweep({ text: c.text, pair: c.text_pair, terms: ['c2p', 'p2c'] });
      assert.equal(r.task, 'question-answering');
      const t = r.target!;
      assert.ok(t.kind === 'span');
      assert.deepEqual([t.start_token, t.end_token], [c.expected.best_span.start, c.expected.best_span.end]);
      close(t.logit_before, c.expected.best_span.score, 'span logit before');
      assertRanking(r, 'qa');
      for (const cell of [at(r.ranking, 0), at(r.ranking, r.ranking.length - 1)]) {
        const a = await model.ablate({ text: c.text, pair: c.text_pair, ablate: `${cell.layer}.${cell.head}:${cell.term}` });
        const qa = a.task_after!.question_answering!;
        close(cell.logit_after, at(qa.start_logits, t.start_token) + at(qa.end_logits, t.end_token), `qa ${cell.layer}.${cell.head}`);
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('sweep targets refused in one line, nothing run', () => {
  it('the engine: unknown label, id out of range, token on a task head, label on a masked-LM head, missing/extra position', async () => {
    const seq = await open(dirOf('v3_seqcls_3'));
    const tok = await open(dirOf('v3_tokcls'));
    const mlm = await open(path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls'));
    const text = 'the cat sat on the mat.';
    try {
      await assert.rejects(
        seq.sweep({ text, terms: ['c2p'], target: { label: 'happy' } }),
        /label "happy" is not one of this head's labels \(entailment, neutral, contradiction\)/,
      );
      await assert.rejects(seq.sweep({ text, terms: ['c2p'], target: { label: 3 } }), /label id 3 is not one of this head's 3 labels/);
      await assert.rejects(seq.sweep({ text, terms: ['c2p'], target: { label: '7' } }), /label id 7/);
      await assert.rejects(seq.sweep({ text, terms: ['c2p'], target: { token: 5 } }), /a token target follows a masked-LM head/);
      await assert.rejects(seq.sweep({ text, terms: ['c2p'], position: 2 }), /reads the whole input/);
      await assert.rejects(tok.sweep({ text, terms: ['c2p'] }), /name its position/);
      await assert.rejects(
        mlm.sweep({ text: 'a [MASK] b', terms: ['c2p'], target: { label: 'x' } }),
        /a label target needs a classification head/,
      );
      await assert.rejects(mlm.sweep({ text: 'a [MASK] b', terms: ['c2p'], target: { token: 1e9 } }), /not a token id of this vocabulary/);
    } finally {
      await Promise.all([seq.dispose(), tok.dispose(), mlm.dispose()]);
    }
  });

  it('masked-LM token:ID follows that token\'s log-prob (which "asked"); the default is unchanged', async () => {
    const mlm = await open(path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls'));
    try {
      const ids = [1, 17, 21, 16, 57, 23, 60, 4, 22, 60, 26, 18, 27, 5, 2];
      const plain = await mlm.sweep({ ids, terms: ['c2p'], position: 3 });
      const asked = await mlm.sweep({ ids, terms: ['c2p'], position: 3, target: { token: plain.followed!.id } });
      assert.equal(asked.followed!.which, 'asked');
      assert.equal(asked.followed!.before.logprob, plain.followed!.before.logprob);
      assert.deepEqual(
        asked.ranking.map((c) => c.drop),
        plain.ranking.map((c) => c.drop),
      );
    } finally {
      await mlm.dispose();
    }
  });
});

describe('deberta-lens ablate --sweep --target', () => {
  const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, 'ablate', '--threads', '2', ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cli-cache') },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const seq = ['--model', dirOf('v3_seqcls_3'), '--text', 'the cat sat on the mat.', '--sweep', 'all'];

  it('a bad form, a label the head lacks, a head-less checkpoint: one line each, nothing built', () => {
    assertOneLineError(cli(...seq, '--target', 'neutral'), /--target takes label:NAME, label:ID \(a classification head\) or token:ID/);
    assertOneLineError(cli(...seq, '--target', 'token:x'), /--target takes label:NAME/);
    assertOneLineError(cli(...seq, '--target', 'label:happy'), /label "happy" is not one of this head's labels/);
    assertOneLineError(
      cli('--model', path.join(FIXTURES, 'deberta', 'v3_tiny_rtd'), '--text', 'a [MASK] b', '--sweep', 'c2p', '--target', 'token:5'),
      /no masked-LM head/,
    );
    assertOneLineError(
      cli('--model', dirOf('v3_seqcls_3'), '--text', 'x', '--ablate', '0.0:c2p', '--target', 'label:0'),
      /--target belongs to --sweep/,
    );
    assert.equal(fs.existsSync(path.join(tmp, 'cli-cache', 'deberta-lens')), false, 'no graph was built');
  });

  it('prints the ranking with the target described and logit_after/score_after per cell', () => {
    const r = cli(...seq, '--target', 'label:neutral');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.task, 'sequence-classification');
    assert.deepEqual(Object.keys(out.target), ['kind', 'id', 'label', 'logit_before', 'score_before']);
    assert.deepEqual([out.target.kind, out.target.id, out.target.label], ['label', 1, 'neutral']);
    assert.equal(out.followed, undefined);
    assert.equal(out.ranking.length, 24);
    for (const c of out.ranking) assert.deepEqual(Object.keys(c), ['layer', 'head', 'term', 'drop', 'logit_after', 'score_after']);
    assert.deepEqual(Object.keys(out.grid), ['c2c', 'c2p', 'p2c']);
  });
});
