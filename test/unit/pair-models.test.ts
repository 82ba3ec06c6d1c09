// The fine-tuned pair classifiers (models/default-pairs, models/bert-twin-pairs: "does B continue A?") against
// Hugging Face's DebertaV2ForSequenceClassification / BertForSequenceClassification on their own weights, float64
// (test/data/fixtures/default-pairs/hf_reference.json, written by tools/train-default-model/make_pairs_reference.py).
// Tolerance: |got − want| ≤ 1e-4 + 1e-4·|want| on every logit and score; ids and the label exact.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES, REPO_ROOT } from './helpers';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-pair-models-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

interface PairCase {
  name: string;
  text: string;
  text_pair: string;
  input_ids: number[];
  expected: { logits: number[]; scores: number[]; label: string };
}
interface PairModel {
  model: string;
  id2label: Record<string, string>;
  cases: PairCase[];
}
const reference = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'default-pairs', 'hf_reference.json'), 'utf8')) as { models: PairModel[] };

function close(got: number[], want: number[], what: string): void {
  assert.equal(got.length, want.length, `${what}: length`);
  want.forEach((w, k) => {
    const g = got[k] ?? NaN;
    assert.ok(Math.abs(g - w) <= 1e-4 + 1e-4 * Math.abs(w), `${what}[${k}]: got ${g}, want ${w}`);
  });
}

describe('the fine-tuned pair classifiers against Hugging Face', () => {
  for (const m of reference.models) {
    it(`${m.model}: every pair's ids, logits, scores and label`, async () => {
      const model = await openModel(path.join(REPO_ROOT, m.model), { cacheDir, executionProvider: 'cpu', threads: 2 });
      try {
        assert.ok(m.cases.length >= 4, `${m.model}: the reference holds its pairs`);
        for (const c of m.cases) {
          const r = await model.predict({ text: c.text, pair: c.text_pair });
          assert.equal(r.task, 'sequence-classification', `${m.model}/${c.name}`);
          assert.deepEqual(r.input_ids, c.input_ids, `${m.model}/${c.name} input_ids`);
          const cls = r.classification;
          assert.ok(cls, `${m.model}/${c.name}: a classification`);
          assert.deepEqual(
            cls.labels.map((l) => l.label),
            Object.keys(m.id2label).map((id) => m.id2label[id]),
            `${m.model}: labels in the checkpoint's order`,
          );
          close(
            cls.labels.map((l) => l.logit),
            c.expected.logits,
            `${m.model}/${c.name} logits`,
          );
          close(
            cls.labels.map((l) => l.score),
            c.expected.scores,
            `${m.model}/${c.name} scores`,
          );
          assert.equal(cls.predicted?.label, c.expected.label, `${m.model}/${c.name} label`);
        }
      } finally {
        await model.dispose();
      }
    });
  }
});
