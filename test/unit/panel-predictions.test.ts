// The panel's fill-mask (src/extension/lens/panel-predictions.ts) with the real engine: against Hugging Face's own
// outputs on the head fixtures (MLM head, RTD head only, no head), and on the bundled model for the message flow
// (pending → ready, resend after a reload, refusals, a replaced result).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { PanelPredictions, predictionMarkdown } from '../../src/extension/lens/panel-predictions';
import { parseWebviewMessage } from '../../src/shared/protocol/lens';
import { type FillMask, formatProb, type PredictionsToWebview, topLine } from '../../src/shared/predictions';
import { FIXTURES, at } from './helpers';

interface MlmExpected {
  position: number;
  top5_ids: number[];
  logits: number[];
}
interface FixtureCase {
  name: string;
  text: string;
  input_ids: number[];
  mask_positions?: number[];
  expected: { mlm?: MlmExpected[]; rtd_logits?: number[] };
}

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-panel-predictions-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const fixture = (name: string) => path.join(FIXTURES, 'deberta', name);
const casesOf = (name: string): FixtureCase[] =>
  JSON.parse(fs.readFileSync(path.join(fixture(name), 'expected_outputs.json'), 'utf8')).cases;
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });

/** Softmax probability and 1-based rank of `id` in a full logits row, in float64 (from HF's numbers). */
function probAndRank(logits: number[], id: number): { prob: number; rank: number } {
  const max = Math.max(...logits);
  const z = logits.reduce((s, x) => s + Math.exp(x - max), 0);
  const own = at(logits, id);
  return { prob: Math.exp(own - max) / z, rank: 1 + logits.filter((x) => x > own).length };
}

/** A PanelPredictions whose posts and log lines are recorded. */
function host(topK: number | (() => number) = 5) {
  const posted: PredictionsToWebview[] = [];
  const log: string[] = [];
  const panel = new PanelPredictions({
    post: (m) => posted.push(m),
    topK: typeof topK === 'number' ? () => topK : topK,
    log: (l) => log.push(l),
  });
  return { panel, posted, log };
}

async function withModel(dir: string, body: (model: OpenModel) => Promise<void>): Promise<void> {
  const model = await open(dir);
  try {
    await body(model);
  } finally {
    await model.dispose();
  }
}

describe('panel fill-mask against Hugging Face (v3_tiny_mlm_cls)', () => {
  it('every [MASK]: top-5 ids exact, probabilities ≤ 1e-5 from HF logits; the heads read the explain’s hidden state', async () => {
    await withModel(fixture('v3_tiny_mlm_cls'), async (model) => {
      for (const c of casesOf('v3_tiny_mlm_cls')) {
        const result = await model.explain({ text: c.text });
        assert.deepEqual(result.inputIds, c.input_ids, `${c.name}: tokens`);
        const { panel, posted, log } = host();
        const fm = await panel.start(model, result, 7);
        assert.equal(fm.state, 'ready');
        if (fm.state !== 'ready') return;
        assert.equal(fm.mlmHead, 'cls.predictions');
        assert.equal(fm.rtd, undefined);
        assert.deepEqual(
          fm.masks.map((m) => m.position),
          c.mask_positions,
        );
        fm.masks.forEach((m, r) => {
          const want = at(c.expected.mlm!, r);
          assert.equal(m.source, 'input');
          assert.deepEqual(
            m.top.map((t) => t.id),
            want.top5_ids,
            `${c.name} @${m.position}: ids`,
          );
          for (const t of m.top)
            assert.ok(Math.abs(t.prob - probAndRank(want.logits, t.id).prob) <= 1e-5, `${c.name} @${m.position}: prob of ${t.id}`);
        });
        assert.deepEqual(
          posted.map((p) => (p.type === 'fillMask' ? p.fillMask.state : p.type)),
          ['pending', 'ready'],
          'pending first, then the answer',
        );
        assert.ok(posted.every((p) => p.resultId === 7));
        assert.match(log.join('\n'), /heads on the explain’s hidden state/, 'no second encoder run for the [MASK]s');
        result.release();
      }
    });
  });

  it('“what would the model put here?” masks the token: the masked input is HF’s case, and the original is rated from HF’s row', async () => {
    await withModel(fixture('v3_tiny_mlm_cls'), async (model) => {
      const c = casesOf('v3_tiny_mlm_cls').find((k) => k.mask_positions?.length === 1)!;
      const p = at(c.mask_positions!, 0);
      // "▁a" (a one-piece word) where the [MASK] was: masking it again gives exactly HF's input.
      const result = await model.explain({ text: c.text.replace('[MASK]', 'a') });
      const ids = result.inputIds.slice();
      const originalId = at(ids, p);
      ids[p] = at(c.input_ids, p);
      assert.deepEqual(ids, c.input_ids, 'the same tokens but the one at the [MASK]');
      const { panel, posted } = host();
      await panel.start(model, result, 1);
      const tp = await panel.predictToken(1, p);
      assert.equal(tp.state, 'ready');
      if (tp.state !== 'ready') return;
      const want = at(c.expected.mlm!, 0);
      assert.equal(tp.prediction.source, 'masked');
      assert.deepEqual(
        tp.prediction.top.map((t) => t.id),
        want.top5_ids,
      );
      const o = tp.prediction.original!;
      const ref = probAndRank(want.logits, originalId);
      assert.equal(o.id, originalId);
      assert.equal(o.rank, ref.rank, 'rank of the original token');
      assert.ok(Math.abs(o.prob - ref.prob) <= 1e-5, `prob of the original ${o.prob} vs ${ref.prob}`);
      const states = posted
        .filter((m) => m.type === 'tokenPrediction')
        .map((m) => (m.type === 'tokenPrediction' ? m.prediction.state : ''));
      assert.deepEqual(states, ['pending', 'ready']);
      // Asked again: the answer is known, no second run.
      assert.deepEqual(await panel.predictToken(1, p), tp);
      assert.deepEqual(await panel.at(1, p), tp.prediction, 'the editor hover reads it');
      result.release();
    });
  });
});

describe('predictExplained: the explain’s hidden state, or a forward pass when the explain stopped early', () => {
  it('a result of layer 0 only keeps no last hidden state: the encoder runs, with the same HF answer', async () => {
    await withModel(fixture('v3_tiny_mlm_cls'), async (model) => {
      const c = at(casesOf('v3_tiny_mlm_cls'), 0);
      const full = await model.explain({ text: c.text });
      const part = await model.explain({ text: c.text, layers: [0] });
      assert.equal(full.lastHidden?.length, c.input_ids.length * model.checkpoint.spec.hiddenSize);
      assert.equal(part.lastHidden, undefined);
      const a = await model.predictExplained(full, {});
      const b = await model.predictExplained(part, {});
      assert.equal(a.timings.forward_reused, true);
      assert.equal(a.timings.forward_ms, 0);
      assert.equal(b.timings.forward_reused, false);
      for (const r of [a, b])
        assert.deepEqual(
          r.predictions.map((p) => p.top.map((t) => t.id)),
          c.expected.mlm!.map((m) => m.top5_ids),
        );
      full.release();
      assert.equal(full.lastHidden, undefined, 'released with the result');
      await assert.rejects(model.predictExplained(full, {}), /released/);
      part.release();
    });
  });
});

describe('panel fill-mask with an RTD head only (v3_tiny_rtd)', () => {
  it('P(replaced) of every token = sigmoid(HF logit) ≤ 1e-5; no fill-mask; asking about a token says why not', async () => {
    await withModel(fixture('v3_tiny_rtd'), async (model) => {
      const c = at(casesOf('v3_tiny_rtd'), 0);
      const result = await model.explain({ text: c.text });
      const { panel } = host();
      const fm = await panel.start(model, result, 3);
      assert.equal(fm.state, 'ready');
      if (fm.state !== 'ready') return;
      assert.equal(fm.mlmHead, null);
      assert.deepEqual(fm.masks, []);
      assert.equal(fm.rtd!.length, c.input_ids.length);
      fm.rtd!.forEach((p, i) => assert.ok(Math.abs(p - 1 / (1 + Math.exp(-at(c.expected.rtd_logits!, i)))) <= 1e-5, `token ${i}`));
      const tp = await panel.predictToken(3, 2);
      assert.equal(tp.state, 'error');
      if (tp.state === 'error') assert.match(tp.message, /no masked-LM head/);
      result.release();
    });
  });
});

describe('panel fill-mask without a head (v2_tiny, a bare encoder)', () => {
  it('one line saying why there is nothing to show, for the section and for a token', async () => {
    await withModel(fixture('v2_tiny'), async (model) => {
      const result = await model.explain({ text: 'a tiny [MASK] for a tiny random model' });
      const { panel } = host();
      const fm = await panel.start(model, result, 1);
      assert.equal(fm.state, 'none');
      if (fm.state !== 'none') return;
      assert.match(fm.message, /no prediction head .*cls\.predictions.*mask_predictions/);
      assert.doesNotMatch(fm.message, /\n|\bat .*\.js:/, 'one line, no stack');
      const tp = await panel.predictToken(1, 2);
      assert.equal(tp.state, 'error');
      if (tp.state === 'error') assert.equal(tp.message, fm.message);
      result.release();
    });
  });
});

describe('panel fill-mask on the bundled model', () => {
  const text = 'She opened the [MASK] and looked out into the dark night. He put his [MASK] in his pocket.';

  it('top-k from the setting at every [MASK]; the same numbers as a fresh predict of the text', async () => {
    await withModel('default', async (model) => {
      const result = await model.explain({ text });
      const { panel } = host(3);
      const fm = await panel.start(model, result, 1);
      assert.equal(fm.state, 'ready');
      if (fm.state !== 'ready') return;
      assert.equal(fm.k, 3);
      const masks = result.tokens.flatMap((t, i) => (t.text === '[MASK]' ? [i] : []));
      assert.equal(masks.length, 2);
      assert.deepEqual(
        fm.masks.map((m) => m.position),
        masks,
      );
      // The heads on the explain's kept state against the encoder run again on the same text: the bundled model has
      // an Enhanced Mask Decoder, so `top` is read through it (as predict does) and `plain` is the plain head's
      // (predict --no-emd).
      assert.equal(fm.decoder, 'emd');
      const fresh = await model.predict({ text, top: 3 });
      const freshPlain = await model.predict({ text, top: 3, emd: false });
      fm.masks.forEach((m, r) => {
        for (const [shown, again] of [
          [m.top, at(fresh.predictions, r).top],
          [m.plain?.top ?? [], at(freshPlain.predictions, r).top],
        ] as const) {
          assert.deepEqual(
            shown.map((t) => t.id),
            again.map((t) => t.id),
          );
          shown.forEach((t, k) => assert.ok(Math.abs(t.prob - at(again, k).prob) <= 1e-5, `${t.prob} vs ${at(again, k).prob}`));
        }
        assert.ok(
          m.top.every((t, k) => k === 0 || t.prob <= at(m.top, k - 1).prob),
          'sorted',
        );
      });
      assert.match(topLine(at(fm.masks, 0)), /^door \d+\.\d%, /, 'the first [MASK] reads “door”');
      result.release();
    });
  });

  it('a [MASK] answers from the fill-mask; [CLS] is refused; a replaced result refuses; a reload gets everything again', async () => {
    await withModel('default', async (model) => {
      const result = await model.explain({ text });
      let k = 5;
      const { panel, posted } = host(() => k);
      const done = panel.start(model, result, 5);
      const mask = result.tokens.findIndex((t) => t.text === '[MASK]');
      const viaMask = await panel.predictToken(5, mask);
      const fm = (await done) as Extract<FillMask, { state: 'ready' }>;
      assert.equal(viaMask.state, 'ready');
      if (viaMask.state === 'ready') assert.deepEqual(viaMask.prediction, fm.masks[0]);
      const cls = await panel.predictToken(5, 0);
      assert.equal(cls.state, 'error');
      if (cls.state === 'error') assert.match(cls.message, /#0 \[CLS\] is a special token/);
      const outside = await panel.predictToken(5, result.n + 3);
      assert.equal(outside.state, 'error');
      const word = await panel.predictToken(5, 2);
      assert.equal(word.state, 'ready');
      if (word.state === 'ready') assert.equal(word.prediction.original?.token, at(result.tokens, 2).text);

      posted.length = 0;
      panel.resend(5);
      assert.deepEqual(
        posted.map((m) => m.type),
        ['fillMask', 'tokenPrediction', 'tokenPrediction', 'tokenPrediction', 'tokenPrediction'],
      );
      panel.resend(4);
      assert.equal(posted.length, 5, 'another result id gets nothing');

      const next = await model.explain({ text: 'He put his [MASK] in his pocket.' });
      await panel.start(model, next, 6);
      const stale = await panel.predictToken(5, 2);
      assert.equal(stale.state, 'error');
      assert.equal(await panel.at(5, mask), undefined);
      const hover = await panel.at(
        6,
        next.tokens.findIndex((t) => t.text === '[MASK]'),
      );
      assert.ok(hover);
      const md = predictionMarkdown(hover, '[MASK]');
      assert.match(md, /what the model puts at \\\[MASK\\\] #\d+/);
      assert.equal(md.split('\n').filter((l) => /^\| \d+ \|/.test(l)).length, 5);
      // The top-k setting changes: the same result gets its fill-mask again, with the new k.
      k = 2;
      const again = await panel.refresh();
      assert.equal(again?.state === 'ready' && again.k, 2);
      assert.equal(again?.state === 'ready' && at(again.masks, 0).top.length, 2);
      panel.clear();
      assert.equal(await panel.at(6, 1), undefined);
      assert.equal(panel.refresh(), undefined, 'nothing on screen, nothing to refresh');
      result.release();
      next.release();
    });
  });
});

describe('panel fill-mask follows an intervened run of the same text (bundled model)', () => {
  it('its [MASK]s are read after the intervention (as `ablate` gives them); tokens are asked of the plain run only', async () => {
    await withModel('default', async (model) => {
      const text = 'He closed the door behind [MASK] and sat down.';
      const plain = await model.explain({ text });
      const { panel } = host(3);
      const before = await panel.start(model, plain, 1);
      const ablated = await model.explainAblated({ text, ablate: '1.1:c2p' });
      const after = await panel.follow(ablated, 2);
      const want = await model.ablate({ text, ablate: '1.1:c2p', top: 3 });
      assert.ok(before.state === 'ready' && after?.state === 'ready');
      if (before.state !== 'ready' || after?.state !== 'ready') return;
      assert.equal(after.intervened, true);
      assert.equal(before.intervened, undefined);
      // An encoder intervention is read by the plain head (as `ablate` reads it): the panel's plain column.
      const plainOf = (m: (typeof before.masks)[number]) => m.plain?.top ?? m.top;
      const [shownBefore, shownAfter] = [plainOf(at(before.masks, 0)), plainOf(at(after.masks, 0))];
      const [wantBefore, wantAfter] = [at(want.before, 0).top, at(want.after, 0).top];
      assert.deepEqual(
        shownBefore.map((t) => t.id),
        wantBefore.map((t) => t.id),
      );
      assert.deepEqual(
        shownAfter.map((t) => t.id),
        wantAfter.map((t) => t.id),
        'the intervention flips the first choice',
      );
      shownAfter.forEach((t, k) => assert.ok(Math.abs(t.prob - at(wantAfter, k).prob) <= 1e-5));
      assert.notEqual(at(shownAfter, 0).id, at(shownBefore, 0).id);
      const asked = await panel.predictToken(2, 2);
      assert.equal(asked.state, 'error');
      if (asked.state === 'error') assert.match(asked.message, /intervened run/);
      // Back to the plain run: its own predictions again, and questions allowed.
      const back = await panel.follow(plain, 3);
      assert.ok(back?.state === 'ready' && !back.intervened);
      if (back?.state === 'ready') assert.deepEqual(back.masks, before.masks);
      assert.equal((await panel.predictToken(3, 2)).state, 'ready');
      ablated.release();
      plain.release();
    });
  });
});

describe('predictions: messages and formatting', () => {
  it('predictToken from the view is validated', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'predictToken', resultId: 2, i: 4 }), { type: 'predictToken', resultId: 2, i: 4 });
    assert.equal(parseWebviewMessage({ type: 'predictToken', resultId: 2, i: -1 }), undefined);
    assert.equal(parseWebviewMessage({ type: 'predictToken', resultId: 2, i: 1.5 }), undefined);
    assert.equal(parseWebviewMessage({ type: 'predictToken', i: 1 }), undefined);
  });

  it('probabilities read as percentages with the digits that matter', () => {
    assert.equal(formatProb(0.4776), '47.8%');
    assert.equal(formatProb(0.05531), '5.5%');
    assert.equal(formatProb(0.003562), '0.36%');
    assert.equal(formatProb(2.1e-5), '2.1e-3%');
    assert.equal(formatProb(0.99999), '>99.9%');
    assert.equal(formatProb(1), '100.0%');
    assert.equal(formatProb(0), '0%');
    assert.equal(formatProb(NaN), '–');
  });
});
