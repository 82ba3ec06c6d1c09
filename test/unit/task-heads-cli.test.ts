// `deberta-lens predict` and `ablate` on fine-tuned task heads as users run them (dist/cli.js): the JSON shape of each
// head kind, the multiple-choice form, and a refused checkpoint's one line.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { assertOneLineError } from './head-asserts';
import { FIXTURES, REPO_ROOT } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-task-cli-'));
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };
const fixture = (name: string) => path.join(FIXTURES, 'task-heads', name);
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(command: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, command, '--threads', '2', ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI's JSON, read untyped */
function json(r: ReturnType<typeof cli>): any {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const labelKeys = ['id', 'label', 'logit', 'score'];

describe('deberta-lens predict on task heads', () => {
  it('sequence classification: task, input_ids and every label', () => {
    const out = json(
      cli('predict', '--model', fixture('v3_seqcls_3'), '--text', 'the cat sat on the mat.', '--pair', 'a dog ran in the park.'),
    );
    assert.equal(out.task, 'sequence-classification');
    assert.ok(Array.isArray(out.input_ids) && out.input_ids.length === out.tokens.length);
    assert.equal(out.classification.problem_type, 'single_label_classification');
    assert.deepEqual(
      out.classification.labels.map((l: { label: string }) => l.label),
      ['entailment', 'neutral', 'contradiction'],
    );
    for (const l of out.classification.labels) assert.deepEqual(Object.keys(l).sort(), labelKeys);
    assert.deepEqual(out.predictions, []);
  });

  it('token classification: every position, specials included', () => {
    const out = json(cli('predict', '--model', fixture('v3_tokcls'), '--text', 'alice went to paris.'));
    assert.equal(out.task, 'token-classification');
    assert.equal(out.token_classification.length, out.input_ids.length);
    out.token_classification.forEach((row: { position: number; labels: object[] }, i: number) => {
      assert.equal(row.position, i);
      assert.equal(row.labels.length, 5);
      for (const l of row.labels) assert.deepEqual(Object.keys(l).sort(), labelKeys);
    });
  });

  it('question answering: start/end logits and the answer in the context characters', () => {
    const context = 'the cat sat on the mat and the dog ran.';
    const out = json(cli('predict', '--model', fixture('v3_qa'), '--text', 'who sat on the mat?', '--pair', context));
    assert.equal(out.task, 'question-answering');
    const qa = out.question_answering;
    assert.equal(qa.start_logits.length, out.input_ids.length);
    assert.equal(qa.end_logits.length, out.input_ids.length);
    assert.equal(qa.answer.text, context.slice(qa.answer.start, qa.answer.end));
    assert.equal(qa.answer.text, ' on the m'); // Hugging Face's best span on this fixture
  });

  it('multiple choice: --choices "a|b|c", one logit and score per choice', () => {
    const out = json(
      cli('predict', '--model', fixture('v3_mc'), '--text', 'the cat sat on the', '--choices', 'mat.|dog in the park.|tree.'),
    );
    assert.equal(out.task, 'multiple-choice');
    assert.deepEqual(
      out.multiple_choice.choices.map((c: { text: string }) => c.text),
      ['mat.', 'dog in the park.', 'tree.'],
    );
    assert.equal(out.multiple_choice.predicted, 1);
  });

  it('ablate: before and after each hold the head output', () => {
    const out = json(cli('ablate', '--model', fixture('v3_seqcls_3'), '--text', 'the cat sat on the mat.', '--ablate', '1.0:c2p'));
    assert.equal(out.task, 'sequence-classification');
    assert.deepEqual(Object.keys(out.before), ['classification']);
    assert.deepEqual(Object.keys(out.after), ['classification']);
    assert.notEqual(out.before.classification.labels[0].logit, out.after.classification.labels[0].logit);
  });

  it('a refused checkpoint: one line naming the setting', () => {
    assertOneLineError(
      cli('predict', '--model', path.join(fixture('bad'), 'problem_type_unknown'), '--text', 'the cat'),
      /problem_type "not_a_type" is not one of/,
    );
    assertOneLineError(cli('predict', '--model', fixture('v3_mc'), '--ids', '1,2', '--choices', 'a|b'), /--choices goes with --text/);
  });
});
