// The Enhanced Mask Decoder in the panel: its two passes as layers "EMD 1" / "EMD 2" (src/shared/emd-layers.ts), the
// host's answers for those layers (src/extension/lens/emd-passes.ts through request-dispatch.ts) against
// microsoft/DeBERTa's own recorded passes, the first pass's query position part against microsoft's H and P
// (float64, tools/fixtures/make-emd-position-share.py), and the panel's fill-mask through the EMD with the plain
// head beside it against microsoft's EMD logits and Hugging Face's plain head (test/data/fixtures/emd/).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { emdShapeOf, emdViewOf } from '../../src/extension/lens/emd-passes';
import { answerRequest } from '../../src/extension/lens/request-dispatch';
import { PanelPredictions } from '../../src/extension/lens/panel-predictions';
import { emdPassOf, emdQueryText, emdShape, layerLabel, layerShort, pickerLayers, queryPositionShare } from '../../src/shared/emd-layers';
import { fromBuffer, parseRequestBody, type EmdQueryResponse, type SliceResponse } from '../../src/shared/protocol/lens';
import type { PredictionsToWebview } from '../../src/shared/predictions';
import { shareLine, shareSummary } from '../../webview/lens/components/emd-query-model';
import { summaryLine } from '../../webview/lens/components/predictions-model';
import { FIXTURES, at, compareNested } from './helpers';

const EMD = path.join(FIXTURES, 'emd');
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-panel-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(EMD, ...parts), 'utf8'));

async function withModel(name: string, body: (model: OpenModel) => Promise<void>): Promise<void> {
  const model = await open(path.join(EMD, name));
  try {
    await body(model);
  } finally {
    await model.dispose();
  }
}

/** Softmax over a full logits row, float64. */
function softmax(logits: number[]): number[] {
  const max = Math.max(...logits);
  const e = logits.map((x) => Math.exp(x - max));
  const z = e.reduce((s, x) => s + x, 0);
  return e.map((x) => x / z);
}

describe('EMD layers in the pickers', () => {
  const model = { layers: [0, 1, 2], emd: emdShape(3, 64) };

  it('lists the two passes after the encoder layers, named EMD 1 / EMD 2', () => {
    assert.deepEqual(pickerLayers(model), [0, 1, 2, 3, 4]);
    assert.deepEqual(pickerLayers({ layers: [0, 1] }), [0, 1], 'no EMD: the encoder layers only');
    assert.deepEqual(
      pickerLayers(model).map((l) => layerLabel(model, l)),
      ['Layer 0', 'Layer 1', 'Layer 2', 'EMD 1', 'EMD 2'],
    );
    assert.equal(layerShort(model, 4), 'EMD 2');
    assert.equal(layerShort(model, 1), 'L1');
    assert.equal(emdPassOf(model, 3), 0);
    assert.equal(emdPassOf(model, 2), undefined);
    assert.match(emdQueryText(model, 3)!, /layer 2's weights, keys\/values H .* query I = H \+ absolute positions P/);
    assert.match(emdQueryText(model, 4)!, /query = EMD 1's output/);
    assert.equal(emdQueryText(model, 0), undefined);
  });

  it('shows the passes only where the model decodes through them and the text fits its position table', () => {
    assert.deepEqual(emdShapeOf({ layers: 6, emd: 'passes', emd_rows: 64 }, 20), emdShape(6, 64));
    assert.equal(emdShapeOf({ layers: 6, emd: 'passes', emd_rows: 24 }, 25), undefined, 'a text longer than the table');
    assert.equal(emdShapeOf({ layers: 6, emd: 'last-layer' }, 20), undefined, 'position_biased_input: no extra passes');
    assert.equal(emdShapeOf({ layers: 6, emd: 'plain' }, 20), undefined);
  });

  it('the emdQuery request parses (it carries nothing else)', () => {
    assert.deepEqual(parseRequestBody({ type: 'emdQuery', junk: 1 }), { type: 'emdQuery' });
  });
});

describe('the query position part ‖P‖ / (‖H‖ + ‖P‖)', () => {
  it('on numbers worked by hand', () => {
    // Row 0: H = (3, 4) |5|, P = (0, 5) |5| → 1/2. Row 1: H = 0 → 1. Row 2: P = 0 → 0. Row 3: both 0 → 0.
    const q = queryPositionShare([3, 4, 0, 0, 1, 0, 0, 0], [0, 5, 6, 8, 0, 0, 0, 0], 4, 2);
    assert.deepEqual([...q.share], [0.5, 1, 0, 0]);
    assert.deepEqual([...q.positionNorm], [5, 10, 0, 0]);
    assert.deepEqual([...q.contentNorm], [5, 0, 1, 0]);
    assert.throws(() => queryPositionShare([1], [1, 2], 1, 2), /H and P must be \[1, 2\]/);
  });

  it('the webview lines', () => {
    const q = { share: Float32Array.of(0.25, 0.5), contentNorm: Float32Array.of(3, 1), positionNorm: Float32Array.of(1, 1) };
    const name = (i: number) => `#${i}`;
    assert.equal(shareSummary(q, name), 'position part of the query: mean 37.5%, 25.0% (#0) to 50.0% (#1)');
    assert.equal(shareLine(q, 0, name), '#0: position 25.0% of the query (‖P‖ 1.00, ‖H‖ 3.00)');
    assert.equal(shareLine(q, 5, name), '');
  });

  for (const name of ['v3_shared_buckets', 'v2_separate_nobuckets', 'c2p_only_buckets8']) {
    it(`${name}: the host's emdQuery equals microsoft's H and P (float64) ≤ 1e-5`, async (t) => {
      const want = readJson(name, 'position_share.json');
      let worst = 0;
      await withModel(name, async (model) => {
        for (const c of want.cases as { name: string; input_ids: number[]; share: number[]; content_norm: number[] }[]) {
          const result = await model.explain({ ids: c.input_ids });
          const shape = emdShapeOf(model.summary, result.n)!;
          assert.ok(shape, 'the fixture decodes through the EMD passes');
          const ctx = { emd: { layers: shape.layers, view: () => emdViewOf(model, result, shape) } };
          const r = (await answerRequest(result, { type: 'emdQuery' }, ctx)) as EmdQueryResponse;
          assert.equal(r.n, c.input_ids.length);
          const share = fromBuffer(r.share, r.n);
          for (let i = 0; i < r.n; i++) {
            worst = Math.max(worst, Math.abs(at(share, i) - at(c.share, i)));
            assert.ok(Math.abs(at(fromBuffer(r.contentNorm, r.n), i) - at(c.content_norm, i)) <= 1e-4 * (1 + at(c.content_norm, i)));
          }
          result.release();
        }
      });
      assert.ok(worst <= 1e-5, `max |Δ share| ${worst}`);
      t.diagnostic(`${name}: max |Δ share| vs microsoft ${worst.toExponential(2)}`);
    });
  }
});

describe('the host answers EMD layers from the passes', () => {
  it('v3_shared_buckets: slice, heads, row of EMD 1 / EMD 2 are microsoft’s passes (c2c/c2p/p2c ≤ 1e-4, probs)', async () => {
    const fixture = readJson('v3_shared_buckets', 'expected_outputs.json');
    const c = fixture.cases[0];
    const passes = c.expected.emd.passes as { attention?: Record<string, number[][][]> }[];
    await withModel('v3_shared_buckets', async (model) => {
      const result = await model.explain({ text: c.text });
      assert.deepEqual(result.inputIds, c.input_ids);
      const shape = emdShapeOf(model.summary, result.n)!;
      assert.deepEqual(shape.layers, [model.summary.layers, model.summary.layers + 1]);
      const ctx = { emd: { layers: shape.layers, view: () => emdViewOf(model, result, shape) } };
      const n = result.n;
      for (const [k, layer] of shape.layers.entries()) {
        const att = passes[k]!.attention!;
        for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) {
          const want = kind === 'probs' ? att.probs! : att[`${kind}_scaled`]!;
          for (const head of [0, result.heads - 1]) {
            const r = (await answerRequest(result, { type: 'slice', layer, head, kind }, ctx)) as SliceResponse;
            assert.equal(r.layer, layer);
            const got = fromBuffer(r.data, n * n).map((v) => (kind === 'probs' ? v : v / fixture.scale));
            const { maxDiff } = compareNested(got, [want[head]!]);
            assert.ok(maxDiff <= 1e-4, `EMD ${k + 1} head ${head} ${kind}: max |Δ| ${maxDiff}`);
          }
        }
        const heads = await answerRequest(result, { type: 'heads', layer, kind: 'probs', maxSize: 4 }, ctx);
        assert.equal(heads.type === 'heads' && heads.heads, result.heads);
        const row = await answerRequest(result, { type: 'row', layer, head: 0, i: 2 }, ctx);
        assert.ok(row.type === 'row' && row.rows.probs && row.rows.c2p);
      }
      // An encoder layer still answers from the explain; without the EMD context an EMD layer is refused in one line.
      const enc = (await answerRequest(result, { type: 'slice', layer: 0, head: 0, kind: 'probs' }, ctx)) as SliceResponse;
      assert.equal(enc.layer, 0);
      await assert.rejects(
        answerRequest(result, { type: 'slice', layer: shape.layers[0], head: 0, kind: 'probs' }),
        /is not in this result/,
      );
      await assert.rejects(answerRequest(result, { type: 'emdQuery' }), /shows no Enhanced Mask Decoder passes/);
      result.release();
    });
  });
});

describe('the panel’s fill-mask through the EMD, the plain head beside it', () => {
  it('v3_shared_buckets, “a new [MASK] opened beside the new [MASK]”: microsoft’s EMD top-5 and Hugging Face’s plain top-5 at each [MASK]', async () => {
    const fixture = readJson('v3_shared_buckets', 'expected_outputs.json');
    const c = fixture.cases[0];
    assert.equal(c.text, 'a new [MASK] opened beside the new [MASK]');
    await withModel('v3_shared_buckets', async (model) => {
      const posted: PredictionsToWebview[] = [];
      const panel = new PanelPredictions({ post: (m) => posted.push(m), topK: () => 5, log: () => undefined });
      const result = await model.explain({ text: c.text });
      const fm = await panel.start(model, result, 1);
      assert.equal(fm.state, 'ready');
      const ready = fm;
      assert.equal(ready.decoder, 'emd');
      assert.deepEqual(
        ready.masks.map((m) => m.position),
        c.mask_positions,
      );
      for (const [r, m] of ready.masks.entries()) {
        const emd = c.expected.emd.mlm[r];
        const plain = c.expected.plain.mlm[r];
        assert.deepEqual(
          m.top.map((t) => t.id),
          emd.top5_ids,
          `EMD top-5 at #${m.position}`,
        );
        assert.deepEqual(
          m.plain!.top.map((t) => t.id),
          plain.top5_ids,
          `plain top-5 at #${m.position}`,
        );
        const pe = softmax(emd.logits);
        const pp = softmax(plain.logits);
        m.top.forEach((t) => assert.ok(Math.abs(t.prob - at(pe, t.id)) <= 1e-5, 'EMD probability'));
        m.plain!.top.forEach((t) => assert.ok(Math.abs(t.prob - at(pp, t.id)) <= 1e-5, 'plain probability'));
      }
      // The two [MASK]s follow the same word: only the EMD's absolute positions tell them apart.
      const [a, b] = ready.masks;
      assert.notDeepEqual(
        a!.top.map((t) => t.prob),
        b!.top.map((t) => t.prob),
      );
      assert.match(summaryLine(fm, [], []), /^through the EMD \(plain head beside\) · 2 \[MASK\] · top 5: #\d+ → /);
      assert.deepEqual(posted.at(-1), { type: 'fillMask', resultId: 1, fillMask: fm });

      // "What would the model put here?" goes through the EMD too, with the plain head beside.
      const opened = c.tokens.indexOf('▁o'); // the tiny vocabulary spells “opened” in pieces
      assert.ok(opened > 0);
      const asked = await panel.predictToken(1, opened);
      assert.equal(asked.state, 'ready');
      const p = asked.prediction;
      const cli = await model.predict({ text: c.text, positions: [opened], top: 5 });
      const plainCli = await model.predict({ text: c.text, positions: [opened], top: 5, emd: false });
      assert.equal(cli.decoder, 'emd');
      assert.deepEqual(
        p.top,
        cli.predictions.find((q) => q.position === opened)!.top.map(({ id, token, logit, prob }) => ({ id, token, logit, prob })),
      );
      assert.deepEqual(
        p.plain!.top.map((t) => t.id),
        plainCli.predictions.find((q) => q.position === opened)!.top.map((t) => t.id),
      );
      assert.equal(p.original?.rank, cli.predictions.find((q) => q.position === opened)!.original!.rank);
      result.release();
    });
  });

  it('position_biased: the EMD is the last layer, so there is one list (the plain head) and no EMD layers', async () => {
    await withModel('position_biased', async (model) => {
      assert.equal(model.summary.emd, 'last-layer');
      const result = await model.explain({ text: 'a new [MASK] opened beside the new [MASK]' });
      assert.equal(emdShapeOf(model.summary, result.n), undefined);
      const panel = new PanelPredictions({ post: () => undefined, topK: () => 5, log: () => undefined });
      const fm = await panel.start(model, result, 1);
      assert.ok(fm.state === 'ready' && fm.decoder === undefined && fm.masks.every((m) => m.plain === undefined));
      result.release();
    });
  });

  it('a text longer than the position table: the plain head, and the summary says why', async () => {
    const long = readJson('bad', 'position_table_short', 'bad_input.json').long_case;
    await withModel(path.join('bad', 'position_table_short'), async (model) => {
      const result = await model.explain({ ids: long.input_ids });
      assert.equal(emdShapeOf(model.summary, result.n), undefined, 'no EMD layers for it');
      const panel = new PanelPredictions({ post: () => undefined, topK: () => 5, log: () => undefined });
      const fm = await panel.start(model, result, 1);
      assert.equal(fm.state, 'ready');
      const ready = fm;
      assert.equal(ready.decoder, 'plain');
      assert.match(ready.decoderNote ?? '', /has only 24 rows/);
      assert.match(summaryLine(fm, [], []), /no EMD here: .*shorten the text to at most 24 tokens/);
      result.release();
    });
  });
});
