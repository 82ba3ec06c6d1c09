// Fine-tuned task heads against Hugging Face's own classes (test/data/fixtures/task-heads, float64 numbers): sequence
// classification (softmax, sigmoid, regression; v1, v3, BERT; safetensors and .bin), token classification, question
// answering, multiple choice, single texts and pairs, interventions inside the forward pass, and the checkpoints to
// refuse. Tolerance: |got − want| ≤ 1e-4 + 1e-4·|want| on every value.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { PredictResult, TaskOutput } from '../../src/engine/api';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES } from './helpers';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-task-heads-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const dirOf = (name: string) => path.join(FIXTURES, 'task-heads', name);
const open = (name: string) => openModel(dirOf(name), { cacheDir, executionProvider: 'cpu', threads: 2 });

/* eslint-disable @typescript-eslint/no-explicit-any -- the fixtures' JSON is read untyped */
const expectedOf = (name: string): any => JSON.parse(fs.readFileSync(path.join(dirOf(name), 'expected_outputs.json'), 'utf8'));

/** The largest deviations seen per fixture (reported at the end, and checked against the tolerance as they come). */
const deviations = new Map<string, { abs: number; rel: number }>();
after(() => {
  for (const [name, d] of deviations)
    console.log(`task-heads ${name}: max abs ${d.abs.toExponential(2)}, max rel ${d.rel.toExponential(2)}`);
});

function close(fixture: string, got: ArrayLike<number>, want: number[], what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  const d = deviations.get(fixture) ?? { abs: 0, rel: 0 };
  want.forEach((w, k) => {
    const g = got[k]!;
    const abs = Math.abs(g - w);
    assert.ok(abs <= 1e-4 + 1e-4 * Math.abs(w), `${what}[${k}]: got ${g}, want ${w}`);
    d.abs = Math.max(d.abs, abs);
    d.rel = Math.max(d.rel, abs / Math.max(Math.abs(w), 1e-12));
  });
  deviations.set(fixture, d);
}

const unpadded = (ids: number[], mask: number[]) => ids.filter((_, k) => mask[k] === 1);

/** Checks one case's head output against the fixture's expected fields. */
function checkOutput(fixture: string, kind: string, c: any, out: TaskOutput, ids: number[]): void {
  const e = c.expected;
  const what = `${fixture}/${c.name}`;
  if (kind === 'sequence_classification') {
    const cls = out.classification!;
    close(
      fixture,
      cls.labels.map((l) => l.logit),
      e.logits,
      `${what} logits`,
    );
    close(
      fixture,
      cls.labels.map((l) => l.score),
      e.scores,
      `${what} scores`,
    );
    assert.equal(cls.score_function, e.score_function, what);
    if (e.predicted !== undefined) assert.equal(cls.predicted?.label, e.predicted, what);
  } else if (kind === 'token_classification') {
    const rows = out.token_classification!;
    assert.equal(rows.length, e.logits.length, what);
    rows.forEach((r, i) => {
      assert.equal(r.position, i);
      close(
        fixture,
        r.labels.map((l) => l.logit),
        e.logits[i],
        `${what} logits row ${i}`,
      );
      close(
        fixture,
        r.labels.map((l) => l.score),
        e.scores[i],
        `${what} scores row ${i}`,
      );
      assert.equal(r.predicted.label, e.predicted[i], `${what} predicted ${i}`);
    });
  } else if (kind === 'question_answering') {
    const qa = out.question_answering!;
    close(fixture, qa.start_logits, e.start_logits, `${what} start`);
    close(fixture, qa.end_logits, e.end_logits, `${what} end`);
    const span = e.best_span;
    assert.deepEqual(qa.context_tokens, span.context_tokens, what);
    assert.equal(qa.max_answer_len, span.max_answer_len);
    assert.equal(qa.answer?.start_token, span.start, what);
    assert.equal(qa.answer?.end_token, span.end, what);
    close(fixture, [qa.answer!.score], [span.score], `${what} span score`);
    assert.equal(qa.answer?.start, span.char_start, what);
    assert.equal(qa.answer?.end, span.char_end, what);
    assert.equal(qa.answer?.text, span.answer, what);
  }
  assert.deepEqual(ids, unpadded(c.input_ids, c.attention_mask), `${what} input_ids`);
}

const FIXTURE_NAMES = ['v3_seqcls_3', 'v3_seqcls_tanh_multilabel', 'v3_regression', 'v3_tokcls', 'v3_qa', 'v1_seqcls', 'bert_seqcls'];

describe('task heads against Hugging Face', () => {
  for (const name of FIXTURE_NAMES) {
    it(`${name}: every case, single and pair, and the same from an explain's kept state`, async () => {
      const exp = expectedOf(name);
      const model = await open(name);
      try {
        for (const c of exp.cases) {
          const input = { text: c.text, ...(c.form === 'pair' ? { pair: c.text_pair } : {}) };
          const r = await model.predict(input);
          assert.equal(r.task, exp.kind.replace('_', '-'));
          checkOutput(name, exp.kind, c, r, r.input_ids);
          // The head on the state an explain kept: the same numbers, no second forward pass.
          const explained = await model.explain(input);
          try {
            const again = await model.predictExplained(explained, {});
            assert.equal(again.timings.forward_reused, true);
            checkOutput(name, exp.kind, c, again, again.input_ids);
            await assert.rejects(model.predictExplained(explained, { positions: [1] }), /positions are masked-token predictions/);
          } finally {
            explained.release();
          }
        }
      } finally {
        await model.dispose();
      }
    });
  }

  it('v3_mc: each choice [CLS] prompt [SEP] choice [SEP], softmax over the choices', async () => {
    const exp = expectedOf('v3_mc');
    const model = await open('v3_mc');
    try {
      for (const c of exp.cases) {
        const r = await model.predict({ text: c.text, choices: c.choices });
        assert.equal(r.task, 'multiple-choice');
        const mc = r.multiple_choice!;
        close(
          'v3_mc',
          mc.choices.map((x) => x.logit),
          c.expected.logits,
          `${c.name} logits`,
        );
        close(
          'v3_mc',
          mc.choices.map((x) => x.score),
          c.expected.scores,
          `${c.name} scores`,
        );
        assert.equal(mc.predicted, c.expected.predicted);
        mc.choices.forEach((x, k) => assert.deepEqual(x.input_ids, unpadded(c.input_ids[k], c.attention_mask[k])));
      }
      await assert.rejects(model.predict({ text: 'the cat' }), /--choices/);
    } finally {
      await model.dispose();
    }
  });

  it('question answering without a context says how to give one', async () => {
    const model = await open('v3_qa');
    try {
      await assert.rejects(model.predict({ text: 'who sat?' }), /--text QUESTION --pair CONTEXT/);
    } finally {
      await model.dispose();
    }
  });
});

describe('task heads under interventions (terms removed inside the forward pass)', () => {
  for (const name of ['v3_seqcls_3', 'v3_tokcls']) {
    it(`${name}: before and after every ablation case`, async () => {
      const exp = expectedOf(name);
      const byName = new Map<string, any>(exp.cases.map((c: any) => [c.name, c]));
      const model = await open(name);
      try {
        for (const a of exp.ablation.cases) {
          const c = byName.get(a.case);
          const r = await model.ablate({ text: c.text, ...(c.form === 'pair' ? { pair: c.text_pair } : {}), ablate: a.ablate });
          assert.equal(r.task, exp.kind.replace('_', '-'));
          checkOutput(name, exp.kind, c, r.task_before!, r.input_ids);
          const after = { ...c, name: `${c.name} ${a.ablate}`, expected: { ...c.expected, ...a.expected } };
          if (exp.kind === 'token_classification') {
            // The fixture gives the ablated logits only: check those.
            r.task_after!.token_classification!.forEach((row, i) =>
              close(
                name,
                row.labels.map((l) => l.logit),
                a.expected.logits[i],
                `${after.name} row ${i}`,
              ),
            );
          } else {
            const cls = r.task_after!.classification!;
            close(
              name,
              cls.labels.map((l) => l.logit),
              a.expected.logits,
              `${after.name} logits`,
            );
            close(
              name,
              cls.labels.map((l) => l.score),
              a.expected.scores,
              `${after.name} scores`,
            );
          }
        }
      } finally {
        await model.dispose();
      }
    });
  }
});

/** What each bad checkpoint's predict must say (one line naming the file or setting). */
const BAD: Record<string, RegExp> = {
  num_labels_vs_classifier:
    /model\.safetensors: tensor 'classifier\.weight' has shape \[3, 32\], expected \[5, 32\]: config\.json has 5 labels in id2label/,
  id2label_hole: /config\.json: id2label's ids \(0, 2\) are not 0…1: every label from 0 up must be named/,
  id2label_duplicate: /config\.json: id2label names labels 0 and 1 both "POSITIVE"/,
  problem_type_unknown:
    /config\.json: problem_type "not_a_type" is not one of single_label_classification, multi_label_classification, regression/,
  classifier_missing:
    /config\.json: architectures names DebertaV2ForSequenceClassification, but model\.safetensors holds no pooler\.dense\.weight \[32, 32\], pooler\.dense\.bias \[32\], classifier\.weight \[num_labels, 32\], classifier\.bias \[num_labels\]/,
  unprefixed_encoder_with_head: /model\.safetensors: the encoder's tensors lack the "deberta\." prefix while task-head tensors are present/,
  pooler_hidden_size_mismatch: /config\.json: pooler_hidden_size 48 differs from hidden_size 32/,
};

describe('task-head checkpoints to refuse', () => {
  for (const [name, pattern] of Object.entries(BAD)) {
    it(`${name}: predict and ablate refuse in one line; explain still works`, async () => {
      const model = await open(path.join('bad', name));
      try {
        const refusal = (e: unknown) => {
          const msg = (e as Error).message;
          assert.match(msg, pattern);
          assert.ok(!msg.includes('\n'), msg);
          return true;
        };
        await assert.rejects(model.predict({ text: 'the cat sat on the mat.' }), refusal);
        await assert.rejects(model.ablate({ text: 'the cat sat on the mat.', ablate: '1.0:c2p' }), refusal);
        const r = await model.explain({ text: 'the cat sat on the mat.', pair: 'a dog ran.' });
        try {
          assert.equal((await r.load(0)).probs.length, 4 * r.tokens.length ** 2);
        } finally {
          r.release();
        }
      } finally {
        await model.dispose();
      }
    });
  }
});

describe('pairs', () => {
  it('a pair explains on a model with no token types (v3) and its tokens follow [CLS] A [SEP] B [SEP]', async () => {
    const model = await open('v3_seqcls_3');
    try {
      const r: PredictResult = await model.predict({ text: 'is it true?', pair: 'yes it is.' });
      const c = expectedOf('v3_seqcls_3').cases.find((x: any) => x.name === 'pair3');
      assert.deepEqual(r.input_ids, c.input_ids);
    } finally {
      await model.dispose();
    }
  });
});

describe('task-head arithmetic', () => {
  it('erf (the exact GELU of the poolers) to double precision on both sides of its two branches', async () => {
    const { erf } = await import('../../src/engine/run/task-math');
    // Python's math.erf (the C library's).
    const want: [number, number][] = [
      [0.5, 0.5204998778130465],
      [-1.2, -0.9103139782296353],
      [2.49, 0.9995707121322661],
      [3, 0.9999779095030014],
      [-4.1, -0.9999999932999724],
      [2.51, 0.9996142945182758],
      [1e-3, 0.0011283787909692365],
    ];
    for (const [x, y] of want) assert.ok(Math.abs(erf(x) - y) < 1e-14, `erf(${x}) = ${erf(x)}, want ${y}`);
  });
});
