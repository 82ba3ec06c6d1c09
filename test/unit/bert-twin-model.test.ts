// The BERT twin shipped in models/bert-twin: what `--model bert-twin` resolves to, within the size budget, and the
// real engine against Hugging Face's own BertForMaskedLM + DebertaV2Tokenizer on its weights
// (test/data/fixtures/bert-twin, made by tools/fixtures/make-twin-reference.py): ids, every listed layer's scores
// (≤ 1e-4 of the largest |score|) and probs (≤ 1e-5 absolute), the last hidden state and the MLM top 5 at [MASK].
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forwardOnly } from '../../src/engine/run/input';
import { inspectModel, openModel, type OpenModel, resolveModelDir } from '../../src/engine/model/open-model';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const DIR = path.join(REPO_ROOT, 'models', 'bert-twin');
const BUDGET_BYTES = 25 * 1024 * 1024;
type M3 = number[][][];
interface Case {
  name: string;
  text: string;
  text_pair: string | null;
  input_ids: number[];
  token_type_ids: number[];
  tokens: string[];
  rows: number[] | null;
  expected: {
    layers: Record<string, { scores: M3; probs: M3 }>;
    last_hidden_state?: number[][];
    mlm_top5: Record<string, { ids: number[]; logits: number[] }>;
  };
}
const cases: Case[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'bert-twin', 'expected_outputs.json'), 'utf8')).cases;
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-twin-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

/** Max |got − want| and max |want| over the query rows listed (all rows when `rows` is null); got is [H][n][n]. */
function compareRows(got: Float32Array, want: M3, n: number, rows: number[] | null): { maxDiff: number; maxAbs: number } {
  let maxDiff = 0,
    maxAbs = 0;
  want.forEach((head, h) =>
    head.forEach((row, r) =>
      row.forEach((w, j) => {
        const i = rows ? at(rows, r) : r;
        maxAbs = Math.max(maxAbs, Math.abs(w));
        maxDiff = Math.max(maxDiff, Math.abs(w - at(got, (h * n + i) * n + j)));
      }),
    ),
  );
  return { maxDiff, maxAbs };
}

describe('the bundled BERT twin', () => {
  it("is what --model bert-twin resolves to: BERT, the default model's spm.model, 128 positions", async () => {
    assert.equal(resolveModelDir('bert-twin'), DIR);
    const s = await inspectModel('bert-twin');
    assert.equal(s.type, 'bert');
    assert.equal(s.tokenizer, 'spm');
    assert.equal(s.bundled, 'bert-twin');
    assert.equal(s.is_default, false);
    assert.equal(s.layers, 4);
    assert.equal(s.heads, 8);
    assert.deepEqual(fs.readFileSync(path.join(DIR, 'spm.model')), fs.readFileSync(path.join(REPO_ROOT, 'models', 'default', 'spm.model')));
    for (const f of ['config.json', 'model.safetensors', 'spm.model', 'tokenizer_config.json', 'MODEL_CARD.md']) {
      assert.ok(fs.existsSync(path.join(DIR, f)), `${f} is shipped`);
    }
  });

  it(`stays within the ${BUDGET_BYTES / 2 ** 20} MB budget`, () => {
    let total = 0;
    for (const f of fs.readdirSync(DIR)) total += fs.statSync(path.join(DIR, f)).size;
    assert.ok(total <= BUDGET_BYTES, `models/bert-twin is ${(total / 2 ** 20).toFixed(1)} MB`);
  });

  describe('HF parity', () => {
    let model: OpenModel;
    before(async () => {
      model = await openModel('bert-twin', { cacheDir, executionProvider: 'cpu', threads: 2 });
    });
    after(() => model.dispose());

    for (const c of cases) {
      it(`${c.name} (n=${c.input_ids.length}): scores ≤ 1e-4 relative, probs ≤ 1e-5, top 5 at [MASK]`, async (t) => {
        // Text up to the twin's 128 positions; the cut paragraph goes in as HF's ids.
        const result = c.rows
          ? await model.explain({ ids: c.input_ids })
          : await model.explain({ text: c.text, pair: c.text_pair ?? undefined });
        assert.deepEqual(result.inputIds, c.input_ids);
        if (!c.rows) assert.deepEqual(result.tokenTypeIds ?? c.input_ids.map(() => 0), c.token_type_ids);
        const n = c.input_ids.length;
        const figures: string[] = [];
        for (const [key, want] of Object.entries(c.expected.layers)) {
          const l = Number(key);
          await result.load(l);
          const s = compareRows(result.tensor(l, 'scores'), want.scores, n, c.rows);
          assert.ok(s.maxDiff <= 1e-4 * s.maxAbs, `layer ${l} scores: max diff ${s.maxDiff} vs max |x| ${s.maxAbs}`);
          const p = compareRows(result.tensor(l, 'probs'), want.probs, n, c.rows);
          assert.ok(p.maxDiff <= 1e-5, `layer ${l} probs: max diff ${p.maxDiff}`);
          figures.push(`L${l} scores ${(s.maxDiff / s.maxAbs).toExponential(1)} rel, probs ${p.maxDiff.toExponential(1)} abs`);
        }
        if (c.expected.last_hidden_state) {
          const { hidden } = await forwardOnly(model, c.input_ids, undefined, result.tokenTypeIds);
          const h = compareRows(hidden, [c.expected.last_hidden_state], 256, null);
          assert.ok(h.maxDiff <= 1e-4 * h.maxAbs, `last hidden: max diff ${h.maxDiff}`);
          figures.push(`hidden ${h.maxDiff.toExponential(1)} abs`);
        }
        const masks = Object.entries(c.expected.mlm_top5);
        if (masks.length) {
          const pred = await model.predictExplained(result, { top: 5 });
          for (const [pos, want] of masks) {
            const got = pred.predictions.find((p) => p.position === Number(pos));
            assert.ok(got, `a prediction at ${pos}`);
            assert.deepEqual(
              got.top.map((x) => x.id),
              want.ids,
              `top-5 ids at ${pos}`,
            );
            got.top.forEach((x, k) => {
              const logit = at(want.logits, k);
              assert.ok(Math.abs(x.logit - logit) <= 1e-4 * Math.max(1, Math.abs(logit)), `logit ${k} at ${pos}`);
            });
          }
          figures.push(`top 5 at ${masks.map(([p]) => p).join(', ')} equal`);
        }
        t.diagnostic(figures.join('; '));
        result.release();
      });
    }

    it('a text longer than its 128 positions is refused in one line that says so', async () => {
      const long = Array.from({ length: 200 }, () => 'word').join(' ');
      await assert.rejects(model.explain({ text: long }), /absolute positions for only 128/);
    });
  });
});
