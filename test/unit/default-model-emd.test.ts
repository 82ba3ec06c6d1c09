// The bundled model's Enhanced Mask Decoder against microsoft/DeBERTa's own MaskedLanguageModel (float64), and its
// plain head (--no-emd) against Hugging Face's DebertaV2ForMaskedLM: numbers written by
// tools/train-default-model/make_emd_reference.py, never computed by this engine.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emdPlan } from '../../src/engine/checkpoint/emd';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { PredictResult } from '../../src/engine/api';
import { assertClose } from './head-asserts';
import { FIXTURES, at } from './helpers';

interface Top5 {
  position: number;
  top5_ids: number[];
  top5_logits: number[];
  top5_probs: number[];
}
interface Case {
  text: string;
  input_ids: number[];
  mask_positions: number[];
  emd: Top5[];
  plain: Top5[];
}

const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'default-model', 'emd_reference.json'), 'utf8')) as { cases: Case[] };
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-default-emd-'));
let model: OpenModel;
before(async () => (model = await openModel('default', { cacheDir, executionProvider: 'cpu', threads: 2 })));
after(async () => {
  await model.dispose();
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

function assertTop5(r: PredictResult, want: Top5[], what: string): void {
  assert.deepEqual(
    r.predictions.map((p) => p.position),
    want.map((w) => w.position),
    `${what}: [MASK] positions`,
  );
  r.predictions.forEach((p, k) => {
    const w = at(want, k);
    const label = `${what} at ${p.position}`;
    assert.deepEqual(
      p.top.map((t) => t.id),
      w.top5_ids,
      `${label}: top-5 ids`,
    );
    assertClose(
      p.top.map((t) => t.logit),
      w.top5_logits,
      `${label}: logits`,
    );
    p.top.forEach((t, j) => assert.ok(Math.abs(t.prob - at(w.top5_probs, j)) <= 1e-5, `${label}: prob ${t.prob} vs ${w.top5_probs[j]}`));
  });
}

describe("the bundled model's Enhanced Mask Decoder", () => {
  it('has what the EMD needs: microsoft’s head and a position table of 512 rows', () => {
    assert.deepEqual(emdPlan(model.checkpoint, model.heads.heads), { kind: 'passes', rows: 512 });
  });

  for (const c of ref.cases) {
    it(`"${c.text}": the EMD equals microsoft's MaskedLanguageModel (top-5 ids exact, logits ≤ 1e-4 relative, probabilities ≤ 1e-5)`, async () => {
      const r = await model.predict({ text: c.text });
      assert.deepEqual(r.input_ids, c.input_ids, 'tokens');
      assert.equal(r.decoder, 'emd');
      assert.equal(r.decoder_note, undefined);
      assertTop5(r, c.emd, 'EMD');
    });

    it(`"${c.text}": --no-emd equals Hugging Face's plain head`, async () => {
      const r = await model.predict({ text: c.text, emd: false });
      assert.equal(r.decoder, 'plain');
      assertTop5(r, c.plain, 'plain');
    });
  }
});
