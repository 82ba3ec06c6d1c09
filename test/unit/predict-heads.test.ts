// The prediction heads against Hugging Face's DebertaV2ForMaskedLM (both key layouts) and microsoft's RTD head:
// first the head graph alone on HF's own last hidden state, then end to end from the text.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { HeadOutput } from '../../src/engine/graph/head-graph';
import { findHeads } from '../../src/engine/checkpoint/heads';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { PredictResult } from '../../src/engine/api';
import { fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';
import { f32, tempDir } from './checkpoint-test-utils';
import { assertClose, klFromLogits } from './head-asserts';
import { FIXTURES, REPO_ROOT, at } from './helpers';

interface MlmExpected {
  position: number;
  top5_ids: number[];
  top5_logits: number[];
  logits: number[];
}
interface FixtureCase {
  name: string;
  text: string;
  tokens: string[];
  input_ids: number[];
  mask_positions?: number[];
  expected: { mlm?: MlmExpected[]; rtd_logits?: number[]; last_hidden_state: number[][] };
  ablation?: { mlm: MlmExpected[]; last_hidden_state: number[][] };
}

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-heads-'));
const fixture = (name: string) => path.join(FIXTURES, 'deberta', name);
const casesOf = (name: string): FixtureCase[] =>
  JSON.parse(fs.readFileSync(path.join(fixture(name), 'expected_outputs.json'), 'utf8')).cases;
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

/** Softmax probability and 1-based rank of `id` in a full logits row, in float64. */
function probAndRank(logits: number[], id: number): { prob: number; rank: number } {
  const max = Math.max(...logits);
  const z = logits.reduce((s, x) => s + Math.exp(x - max), 0);
  const own = at(logits, id);
  return { prob: Math.exp(own - max) / z, rank: 1 + logits.filter((x) => x > own).length };
}

function checkMlm(r: PredictResult, c: FixtureCase): void {
  const want = c.expected.mlm!;
  assert.deepEqual(
    r.predictions.map((p) => p.position),
    want.map((m) => m.position),
  );
  r.predictions.forEach((p, k) => {
    const m = at(want, k);
    assert.deepEqual(
      p.top.map((t) => t.id),
      m.top5_ids,
      `${c.name} @${m.position}: top-5 ids`,
    );
    assertClose(
      p.top.map((t) => t.logit),
      m.top5_logits,
      `${c.name} @${m.position}: top-5 logits`,
    );
    p.top.forEach((t) =>
      assert.ok(Math.abs(t.prob - probAndRank(m.logits, t.id).prob) <= 1e-5, `${c.name} @${m.position}: prob of ${t.id}`),
    );
  });
}

describe('prediction heads: the head graph on HF last hidden states', () => {
  for (const name of ['v3_tiny_mlm_cls', 'v3_tiny_mlm_lm', 'v3_tiny_rtd']) {
    it(`${name}: logits ≤ 1e-4 relative, ids exact, ranks and probabilities of a target`, async () => {
      const model = await open(fixture(name));
      try {
        for (const c of casesOf(name)) {
          const hidden = Float32Array.from(c.expected.last_hidden_state.flat());
          const n = c.input_ids.length;
          const positions = c.mask_positions ?? [];
          const targets = positions.map((_, k) => (k * 37 + 11) % model.checkpoint.spec.vocabSize); // arbitrary ids
          const out = await model.heads.run(hidden, n, positions, targets, 5, true);
          if (c.expected.mlm) {
            const ids = new Int32Array(out.read(HeadOutput.topIds).buffer);
            const logits = out.read(HeadOutput.topLogits),
              lse = out.read(HeadOutput.logSumExp);
            const tLogits = out.read(HeadOutput.targetLogits),
              tRanks = new Int32Array(out.read(HeadOutput.targetRanks).buffer);
            c.expected.mlm.forEach((m, r) => {
              assert.deepEqual([...ids.subarray(r * 5, r * 5 + 5)], m.top5_ids);
              assertClose(logits.subarray(r * 5, r * 5 + 5), m.top5_logits, `${c.name} top-5`);
              const target = at(targets, r),
                tLogit = at(tLogits, r);
              const { prob, rank } = probAndRank(m.logits, target);
              assert.ok(Math.abs(tLogit - at(m.logits, target)) <= 1e-4 * Math.max(...m.logits.map(Math.abs)), 'target logit');
              assert.equal(at(tRanks, r) + 1, rank, 'target rank');
              assert.ok(Math.abs(Math.exp(tLogit - at(lse, r)) - prob) <= 1e-5, 'target probability');
            });
          } else {
            assertClose(out.read(HeadOutput.rtdLogits), c.expected.rtd_logits!, `${c.name} rtd logits`);
          }
        }
      } finally {
        await model.dispose();
      }
    });
  }
});

describe('prediction heads: the compare graph on HF states before and after the c2p ablation of layer 1, head 0', () => {
  it('after: top-5 ids exact, logits ≤ 1e-4 relative; KL(before ‖ after) ≤ 1e-5 absolute, from the full rows', async () => {
    const model = await open(fixture('v3_tiny_mlm_cls'));
    try {
      for (const c of casesOf('v3_tiny_mlm_cls')) {
        const before = Float32Array.from(c.expected.last_hidden_state.flat());
        const after = Float32Array.from(c.ablation!.last_hidden_state.flat());
        const positions = c.mask_positions!;
        const out = await model.heads.run(
          after,
          c.input_ids.length,
          positions,
          positions.map(() => 0),
          5,
          false,
          undefined,
          before,
        );
        const ids = new Int32Array(out.read(HeadOutput.topIds).buffer),
          logits = out.read(HeadOutput.topLogits),
          kl = out.read(HeadOutput.kl);
        c.ablation!.mlm.forEach((m, r) => {
          assert.deepEqual([...ids.subarray(r * 5, r * 5 + 5)], m.top5_ids, `${c.name} @${m.position}: ids after`);
          assertClose(logits.subarray(r * 5, r * 5 + 5), m.top5_logits, `${c.name} @${m.position}: logits after`);
          const want = klFromLogits(at(c.expected.mlm!, r).logits, m.logits);
          assert.ok(want > 1e-3, 'the ablation changes the distribution');
          assert.ok(Math.abs(at(kl, r) - want) <= 1e-5, `${c.name} @${m.position}: KL ${kl[r]} vs ${want}`);
        });
      }
    } finally {
      await model.dispose();
    }
  });

  it('the same on the HF states of seven more interventions (other terms, heads, layers; zero and mean)', async () => {
    const file = JSON.parse(fs.readFileSync(path.join(fixture('v3_tiny_mlm_cls'), 'ablation_cases.json'), 'utf8')) as {
      texts: { name: string; input_ids: number[]; mask_positions: number[] }[];
      cases: { ablate: string; mode: string; texts: { name: string; mlm: MlmExpected[]; last_hidden_state: number[][] }[] }[];
    };
    const before = new Map(casesOf('v3_tiny_mlm_cls').map((c) => [c.name, c]));
    const model = await open(fixture('v3_tiny_mlm_cls'));
    try {
      assert.equal(file.cases.length, 7);
      for (const ab of file.cases) {
        for (const t of ab.texts) {
          const c = before.get(t.name)!;
          const out = await model.heads.run(
            Float32Array.from(t.last_hidden_state.flat()),
            c.input_ids.length,
            c.mask_positions!,
            c.mask_positions!.map(() => 0),
            5,
            false,
            undefined,
            Float32Array.from(c.expected.last_hidden_state.flat()),
          );
          const ids = new Int32Array(out.read(HeadOutput.topIds).buffer),
            logits = out.read(HeadOutput.topLogits),
            kl = out.read(HeadOutput.kl);
          t.mlm.forEach((m, r) => {
            const what = `${ab.ablate} (${ab.mode}) ${t.name} @${m.position}`;
            assert.deepEqual([...ids.subarray(r * 5, r * 5 + 5)], m.top5_ids, what);
            assertClose(logits.subarray(r * 5, r * 5 + 5), m.top5_logits, what);
            assert.ok(Math.abs(at(kl, r) - klFromLogits(at(c.expected.mlm!, r).logits, m.logits)) <= 1e-5, `${what}: KL`);
          });
        }
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('prediction heads: end to end from the text', () => {
  const results: Record<string, PredictResult[]> = {};
  for (const name of ['v3_tiny_mlm_cls', 'v3_tiny_mlm_lm']) {
    it(`${name}: every [MASK] of the text, top-5 ids exact and logits ≤ 1e-4 relative; HF's tokens`, async () => {
      const model = await open(fixture(name));
      try {
        assert.equal(findHeads(model.checkpoint).mlm?.layout, name.endsWith('cls') ? 'cls.predictions' : 'lm_predictions.lm_head');
        results[name] = [];
        for (const c of casesOf(name)) {
          // Hugging Face's numbers: the plain head (--no-emd); the EMD on these weights is test/unit/emd.test.ts's.
          const r = await model.predict({ text: c.text, emd: false });
          assert.equal(r.decoder, 'plain');
          assert.deepEqual(
            r.tokens.map((t) => t.text),
            c.tokens,
            `${c.name}: tokens`,
          );
          assert.deepEqual(r.input_ids, c.input_ids);
          const maskAt = c.text.indexOf('[MASK]');
          const mask = at(r.tokens, at(c.mask_positions!, 0));
          assert.deepEqual([mask.start, mask.end], [maskAt, maskAt + 6], 'the [MASK] covers its characters');
          assert.ok(r.predictions.every((p) => p.source === 'input' && p.original === undefined));
          assert.equal(r.rtd, undefined);
          checkMlm(r, c);
          results[name].push(r);
        }
      } finally {
        await model.dispose();
      }
    });
  }
  it('the two layouts of the same head give identical logits', () => {
    const [a, b] = [results.v3_tiny_mlm_cls, results.v3_tiny_mlm_lm];
    assert.ok(a && b, 'both layouts ran');
    assert.deepEqual(
      a.map((r) => r.predictions),
      b.map((r) => r.predictions),
    );
  });
  it('v3_tiny_rtd: a replaced-token logit for every token, [CLS] and [SEP] included', async () => {
    const model = await open(fixture('v3_tiny_rtd'));
    try {
      for (const c of casesOf('v3_tiny_rtd')) {
        const r = await model.predict({ text: c.text });
        assert.equal(r.mlm_head, null);
        assert.deepEqual(r.predictions, []);
        assert.deepEqual(
          r.rtd!.map((s) => s.position),
          c.input_ids.map((_, i) => i),
        );
        assertClose(
          r.rtd!.map((s) => s.logit),
          c.expected.rtd_logits!,
          `${c.name} rtd`,
        );
        r.rtd!.forEach((s) => assert.ok(Math.abs(s.prob - 1 / (1 + Math.exp(-s.logit))) < 1e-12));
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('prediction heads: positions masked on request, and bad input', () => {
  let model: OpenModel;
  before(async () => (model = await open(fixture('v3_tiny_mlm_cls'))));
  after(() => model.dispose());

  it('a position asked for is masked first: the same as the [MASK] typed in its place, plus the original token', async () => {
    const c = at(casesOf('v3_tiny_mlm_cls'), 0);
    const unmasked = c.input_ids.slice();
    unmasked[6] = 27; // any other token where the fixture's [MASK] stands
    const r = await model.predict({ ids: unmasked, positions: [6, 9], top: 5 });
    assert.deepEqual(
      r.predictions.map((p) => [p.position, p.source]),
      [
        [6, 'masked'],
        [9, 'masked'],
      ],
    );
    checkMlm({ ...r, predictions: [at(r.predictions, 0)] }, c);
    const orig = at(r.predictions, 1).original!;
    assert.equal(orig.id, unmasked[9]);
    assert.ok(orig.rank >= 1 && orig.prob > 0 && orig.prob < 1);
    const asMask = await model.predict({ ids: c.input_ids.map((id, i) => (i === 9 ? 60 : id === 60 ? 27 : id)) });
    assert.deepEqual(at(asMask.predictions, 0).top, at(r.predictions, 1).top);
    const top = at(r.predictions, 1).top;
    assert.ok(top.some((t) => t.id === orig.id) === orig.rank <= 5, 'rank agrees with the top list');
  });

  it('one clear message each: no [MASK] and no positions, a position past the end, a bad top', async () => {
    await assert.rejects(
      model.predict({ text: 'a tiny model' }),
      /nothing to predict: the input has no \[MASK\] token and no positions were given/,
    );
    await assert.rejects(model.predict({ text: 'a tiny [MASK]', positions: [40] }), /position 40 does not exist: the input has tokens 0…7/);
    await assert.rejects(model.predict({ text: 'a tiny [MASK]', top: 0 }), /top must be an integer from 1 to the vocabulary size 160/);
  });

  it('a checkpoint without a head says so, naming the weight file', async () => {
    const bare = await open(fixture('v2_tiny'));
    try {
      assert.deepEqual(findHeads(bare.checkpoint), {});
      await assert.rejects(
        bare.predict({ ids: [1, 5, 2] }),
        /has no prediction head \(no cls\.predictions\.\*, lm_predictions\.lm_head\.\*, mask_predictions\.\*, classifier\.\* or qa_outputs\.\* tensors in model\.safetensors\)/,
      );
    } finally {
      await bare.dispose();
    }
  });

  it('an RTD-only checkpoint refuses positions to predict', async () => {
    const rtd = await open(fixture('v3_tiny_rtd'));
    try {
      await assert.rejects(rtd.predict({ text: 'a tiny model', positions: [2] }), /has only a replaced-token-detection head/);
    } finally {
      await rtd.dispose();
    }
  });
});

describe('prediction heads: a checkpoint with both heads (as the v3 discriminators on the Hub)', () => {
  it('gives the RTD strip for a text without [MASK], and both for a text with one', async () => {
    // The RTD fixture's tensors plus the MLM head of the lm layout: the same encoder under both.
    const dir = path.join(tempDir('both'), 'v3_tiny_both');
    fs.mkdirSync(dir);
    for (const f of ['config.json', 'spm.model', 'tokenizer_config.json', 'special_tokens_map.json'])
      fs.copyFileSync(path.join(fixture('v3_tiny_rtd'), f), path.join(dir, f));
    const [rtdCk, lmCk] = await Promise.all([loadCheckpoint(fixture('v3_tiny_rtd')), loadCheckpoint(fixture('v3_tiny_mlm_lm'))]);
    const tensors = [...rtdCk.weights.values()].map((t) =>
      fromArray(t.name.startsWith('mask_predictions') ? t.name : `deberta.${t.name}`, t.shape, f32(t)),
    );
    for (const t of lmCk.weights.values()) if (t.name.startsWith('lm_predictions.')) tensors.push(fromArray(t.name, t.shape, f32(t)));
    writeSafetensors(path.join(dir, 'model.safetensors'), tensors);
    const model = await open(dir);
    try {
      const rtdCase = at(casesOf('v3_tiny_rtd'), 0);
      const plain = await model.predict({ text: 'a tiny model' });
      assert.deepEqual(plain.predictions, []);
      assert.equal(plain.rtd!.length, plain.input_ids.length);
      // Hugging Face's numbers are the plain head's (--no-emd); with the EMD the RTD strip must stay the same.
      const r = await model.predict({ text: rtdCase.text, emd: false });
      assert.equal(r.mlm_head, 'lm_predictions.lm_head');
      const viaEmd = await model.predict({ text: rtdCase.text });
      assert.equal(viaEmd.decoder, 'emd');
      assert.deepEqual(viaEmd.rtd, r.rtd);
      assertClose(
        r.rtd!.map((x) => x.logit),
        rtdCase.expected.rtd_logits!,
        'rtd with both heads',
      );
      checkMlm(r, at(casesOf('v3_tiny_mlm_lm'), 0));
    } finally {
      await model.dispose();
    }
  });
});

describe("the bundled model on samples/ablation.md, against HF's code", () => {
  interface Side {
    top5_ids: number[];
    top5_logits: number[];
    top5_probs: number[];
    last_hidden_state: number[][];
  }
  const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'default-model', 'c2p_flip.json'), 'utf8')) as {
    text: string;
    input_ids: number[];
    mask_position: number;
    before: Side;
    cases: { ablate: string; after: Side & { kl: number; before_top1_logprob: number; before_top1_rank: number } }[];
  };
  let model: OpenModel;
  before(async () => (model = await open('default')));
  after(() => model.dispose());

  it("fill-mask equals HF's DebertaV2ForMaskedLM: ids exact, logits ≤ 1e-4 relative, probabilities ≤ 1e-5", async () => {
    // The sample's first line is the sentence; the rest shows the intervention on it.
    const text = fs.readFileSync(path.join(REPO_ROOT, 'samples', 'ablation.md'), 'utf8').split('\n')[0];
    // HF's DebertaV2ForMaskedLM is the plain head on the last hidden state: predict without the bundled model's EMD.
    const r = await model.predict({ text, emd: false });
    assert.deepEqual(r.input_ids, ref.input_ids);
    const p = at(r.predictions, 0);
    assert.equal(p.position, ref.mask_position);
    assert.deepEqual(
      p.top.map((t) => t.id),
      ref.before.top5_ids,
    );
    assertClose(
      p.top.map((t) => t.logit),
      ref.before.top5_logits,
      'logits',
    );
    p.top.forEach((t, k) =>
      assert.ok(Math.abs(t.prob - at(ref.before.top5_probs, k)) <= 1e-5, `prob ${t.prob} vs ${ref.before.top5_probs[k]}`),
    );
  });

  it("HF's states after zeroing c2p of head 1 in layer 1 or 2 flip the top-1; the compare graph gives HF's top-5, KL and rank", async () => {
    const n = ref.input_ids.length,
      pos = ref.mask_position,
      top1 = at(ref.before.top5_ids, 0);
    for (const c of ref.cases) {
      const out = await model.heads.run(
        Float32Array.from(c.after.last_hidden_state.flat()),
        n,
        [pos],
        [top1],
        5,
        false,
        undefined,
        Float32Array.from(ref.before.last_hidden_state.flat()),
      );
      assert.deepEqual([...new Int32Array(out.read(HeadOutput.topIds).buffer)], c.after.top5_ids, c.ablate);
      assert.notEqual(c.after.top5_ids[0], top1, 'the sample flips the prediction');
      assert.ok(Math.abs(at(out.read(HeadOutput.kl), 0) - c.after.kl) <= 1e-5, `${c.ablate}: KL`);
      assert.equal(at(new Int32Array(out.read(HeadOutput.targetRanks).buffer), 0) + 1, c.after.before_top1_rank);
      const logprob = at(out.read(HeadOutput.targetLogits), 0) - at(out.read(HeadOutput.logSumExp), 0);
      assert.ok(Math.abs(logprob - c.after.before_top1_logprob) <= 1e-5, `${c.ablate}: log-probability of the former top-1`);
    }
  });
});
