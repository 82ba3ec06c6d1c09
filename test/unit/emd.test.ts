// DeBERTa's Enhanced Mask Decoder against microsoft/DeBERTa's own MaskedLanguageModel (float64) and the --no-emd
// path against Hugging Face's DebertaV2ForMaskedLM, on the tiny checkpoints of test/data/fixtures/emd/ (made by
// tools/fixtures/make-emd-cases.py); then the two checkpoints on which the EMD cannot run.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { PredictResult } from '../../src/engine/api';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES, at } from './helpers';

interface MlmExpected {
  position: number;
  top5_ids: number[];
  logits: number[];
}
interface EmdCase {
  name: string;
  input_ids: number[];
  mask_positions: number[];
  expected: { emd: { mlm: MlmExpected[] }; plain: { mlm: MlmExpected[] } };
}

const EMD = path.join(FIXTURES, 'emd');
const CASES = ['v3_shared_buckets', 'v2_separate_nobuckets', 'c2p_only_buckets8', 'position_biased'];
const TOLERANCE = 1e-4;
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(EMD, ...parts), 'utf8'));

/** log p of every id of a full logits row, in float64. */
function logSoftmax(logits: number[]): number[] {
  const max = Math.max(...logits);
  const lse = max + Math.log(logits.reduce((s, x) => s + Math.exp(x - max), 0));
  return logits.map((x) => x - lse);
}

/**
 * Every logit and log-probability at every [MASK] (the result holds the whole vocabulary: top = vocab size) against
 * the reference rows; the first choice must be the reference's. Returns the largest absolute difference.
 */
function compareRows(r: PredictResult, want: MlmExpected[], what: string): number {
  assert.deepEqual(
    r.predictions.map((p) => p.position),
    want.map((m) => m.position),
    `${what}: mask positions`,
  );
  let worst = 0;
  r.predictions.forEach((p, k) => {
    const m = at(want, k);
    assert.equal(p.top.length, m.logits.length, `${what} @${m.position}: the whole vocabulary`);
    assert.equal(at(p.top, 0).id, at(m.top5_ids, 0), `${what} @${m.position}: first choice`);
    const logp = logSoftmax(m.logits);
    for (const t of p.top) {
      const dLogit = Math.abs(t.logit - at(m.logits, t.id));
      const dLogp = Math.abs(Math.log(t.prob) - at(logp, t.id));
      worst = Math.max(worst, dLogit, dLogp);
      assert.ok(dLogit <= TOLERANCE, `${what} @${m.position} id ${t.id}: logit ${t.logit} vs ${at(m.logits, t.id)}`);
      assert.ok(dLogp <= TOLERANCE, `${what} @${m.position} id ${t.id}: log-prob off by ${dLogp}`);
    }
  });
  return worst;
}

/** The reference rows and ours differ somewhere (so agreeing with one is not agreeing with both by accident). */
function rowsDiffer(a: MlmExpected[], b: MlmExpected[]): boolean {
  return a.some((m, k) => m.logits.some((x, v) => Math.abs(x - at(at(b, k).logits, v)) > 1e-3));
}

describe('Enhanced Mask Decoder: predict against microsoft/DeBERTa (EMD) and Hugging Face (--no-emd)', () => {
  for (const name of CASES) {
    it(`${name}: logits and log-probs at every [MASK] ≤ 1e-4 on both paths`, async (t) => {
      const dir = path.join(EMD, name);
      const fixture = readJson(name, 'expected_outputs.json');
      const vocab = readJson(name, 'config.json').vocab_size as number;
      const model = await open(dir);
      try {
        let worstEmd = 0,
          worstPlain = 0;
        for (const c of fixture.cases as EmdCase[]) {
          const emd = await model.predict({ ids: c.input_ids, top: vocab });
          assert.equal(emd.decoder, 'emd', `${name} ${c.name}: decoder`);
          worstEmd = Math.max(worstEmd, compareRows(emd, c.expected.emd.mlm, `${name} ${c.name} emd`));
          const plain = await model.predict({ ids: c.input_ids, top: vocab, emd: false });
          assert.equal(plain.decoder, 'plain', `${name} ${c.name}: --no-emd decoder`);
          assert.equal(plain.decoder_note, undefined);
          worstPlain = Math.max(worstPlain, compareRows(plain, c.expected.plain.mlm, `${name} ${c.name} plain`));
          if (fixture.position_biased_input) {
            assert.match(emd.decoder_note ?? '', /position_biased_input is true: the Enhanced Mask Decoder is the last layer itself/);
          } else {
            assert.equal(emd.decoder_note, undefined);
            assert.ok(rowsDiffer(c.expected.emd.mlm, c.expected.plain.mlm), `${name} ${c.name}: the EMD changes the logits`);
          }
        }
        t.diagnostic(`${name}: max |Δ| EMD ${worstEmd.toExponential(2)}, plain ${worstPlain.toExponential(2)}`);
      } finally {
        await model.dispose();
      }
    });
  }

  it('attention in head groups (4 heads as 3 + 1, EngineOptions.attentionHeadGroup): the same numbers', async () => {
    const name = 'v3_shared_buckets';
    const fixture = readJson(name, 'expected_outputs.json');
    const vocab = readJson(name, 'config.json').vocab_size as number;
    const model = await openModel(path.join(EMD, name), { cacheDir, executionProvider: 'cpu', threads: 2, attentionHeadGroup: 3 });
    try {
      for (const c of fixture.cases as EmdCase[]) {
        const r = await model.predict({ ids: c.input_ids, top: vocab });
        assert.equal(r.decoder, 'emd');
        compareRows(r, c.expected.emd.mlm, `${name} ${c.name} emd, head groups of 3`);
      }
    } finally {
      await model.dispose();
    }
  });

  it('the text path tokenizes as the fixture and decodes through the EMD', async () => {
    const c = (readJson('v3_shared_buckets', 'expected_outputs.json').cases as (EmdCase & { text: string })[])[0]!;
    const model = await open(path.join(EMD, 'v3_shared_buckets'));
    try {
      const r = await model.predict({ text: c.text });
      assert.deepEqual(r.input_ids, c.input_ids);
      assert.equal(r.decoder, 'emd');
      assert.deepEqual(
        r.predictions.map((p) => p.top.map((x) => x.id)),
        c.expected.emd.mlm.map((m) => m.top5_ids),
      );
    } finally {
      await model.dispose();
    }
  });
});

describe('Enhanced Mask Decoder: checkpoints it cannot run on', () => {
  it('no absolute position table: one line naming the tensor and the file, the plain head answers', async (t) => {
    const bad = readJson('bad', 'no_position_embeddings', 'bad_input.json');
    const vocab = readJson('bad', 'no_position_embeddings', 'config.json').vocab_size as number;
    const model = await open(path.join(EMD, 'bad', 'no_position_embeddings'));
    try {
      for (const emd of [true, false]) {
        const r = await model.predict({ ids: bad.case.input_ids, top: vocab, emd });
        assert.equal(r.decoder, 'plain');
        t.diagnostic(
          `emd=${emd}: max |Δ| plain ${compareRows(r, bad.case.plain.mlm, `no_position_embeddings emd=${emd}`).toExponential(2)}`,
        );
        if (!emd) assert.equal(r.decoder_note, undefined);
        else {
          const note = r.decoder_note ?? '';
          assert.ok(!note.includes('\n'), 'one line');
          assert.match(note, /model\.safetensors has no absolute position embeddings \(deberta\.embeddings\.position_embeddings\.weight\)/);
          assert.match(note, /Enhanced Mask Decoder cannot run/);
          assert.match(note, /plain head/);
        }
      }
    } finally {
      await model.dispose();
    }
  });

  it('position table shorter than the text: one line with both lengths, the plain head answers; a short text runs the EMD', async (t) => {
    const bad = readJson('bad', 'position_table_short', 'bad_input.json');
    const vocab = readJson('bad', 'position_table_short', 'config.json').vocab_size as number;
    const model = await open(path.join(EMD, 'bad', 'position_table_short'));
    try {
      const long = bad.long_case;
      const n = long.input_ids.length as number;
      assert.ok(n > 24);
      const r = await model.predict({ ids: long.input_ids, top: vocab });
      assert.equal(r.decoder, 'plain');
      const note = r.decoder_note ?? '';
      assert.ok(!note.includes('\n'), 'one line');
      assert.match(
        note,
        new RegExp(`the input has ${n} tokens but deberta\\.embeddings\\.position_embeddings\\.weight .* has only 24 rows`),
      );
      assert.match(note, /shorten the text to at most 24 tokens/);
      const dLong = compareRows(r, long.plain.mlm, 'position_table_short long');
      const plain = await model.predict({ ids: long.input_ids, top: vocab, emd: false });
      assert.equal(plain.decoder_note, undefined);
      compareRows(plain, long.plain.mlm, 'position_table_short long --no-emd');

      const short = bad.short_case;
      const s = await model.predict({ ids: short.input_ids, top: vocab });
      assert.equal(s.decoder, 'emd');
      const dShort = compareRows(s, short.emd.mlm, 'position_table_short short');
      t.diagnostic(`max |Δ| long (plain) ${dLong.toExponential(2)}, short (EMD) ${dShort.toExponential(2)}`);
      compareRows(await model.predict({ ids: short.input_ids, top: vocab, emd: false }), short.plain.mlm, 'short --no-emd');
    } finally {
      await model.dispose();
    }
  });
});
