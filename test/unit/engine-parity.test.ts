// The engine against Hugging Face's own outputs for the shared fixtures (v1, v2, v3 layouts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forwardOnly } from '../../src/engine/run/input';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { FIXTURES, at, compareNested as compare } from './helpers';

interface ExpectedLayer {
  c2c: number[][][];
  c2p?: number[][][];
  p2c?: number[][][];
  probs: number[][][];
  scores: number[][][];
}
interface ExpectedCase {
  name: string;
  text?: string;
  input_ids: number[];
  expected: { scale: number; terms: string[]; layers: ExpectedLayer[]; last_hidden_state: number[][] };
}

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-parity-'));

for (const name of ['v1_tiny', 'v2_tiny', 'v3_tiny']) {
  describe(`HF parity: ${name}`, () => {
    const dir = path.join(FIXTURES, 'deberta', name);
    const cases: ExpectedCase[] = JSON.parse(fs.readFileSync(path.join(dir, 'expected_outputs.json'), 'utf8')).cases;
    let model: OpenModel;
    before(async () => {
      model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
    });
    after(() => model.dispose());

    for (const c of cases) {
      it(`${c.name} (n=${c.input_ids.length}): raw terms ≤ 1e-4 relative, probs ≤ 1e-5 absolute, hidden ≤ 1e-4`, async () => {
        const result = await model.explain({ ids: c.input_ids });
        const { hidden } = await forwardOnly(model, c.input_ids);
        assert.ok(Math.abs(result.scale - c.expected.scale) < 1e-6, `scale ${result.scale} vs ${c.expected.scale}`);
        assert.deepEqual([...result.terms].sort(), [...c.expected.terms].sort());
        for (const [l, want] of c.expected.layers.entries()) {
          assert.equal(result.isLoaded(l), false, 'layers are computed on demand');
          await result.load(l);
          for (const kind of ['c2c', 'c2p', 'p2c'] as const) {
            const w = want[kind];
            if (!w) continue;
            const { maxDiff, maxAbs } = compare(result.tensor(l, kind), w);
            assert.ok(maxDiff <= 1e-4 * maxAbs, `layer ${l} ${kind}: max diff ${maxDiff} vs max |x| ${maxAbs}`);
          }
          const p = compare(result.tensor(l, 'probs'), want.probs);
          assert.ok(p.maxDiff <= 1e-5, `layer ${l} probs: max diff ${p.maxDiff}`);
          const s = compare(result.tensor(l, 'scores'), want.scores);
          assert.ok(s.maxDiff <= 1e-4 * s.maxAbs, `layer ${l} scores: max diff ${s.maxDiff}`);
        }
        const h = compare(hidden, c.expected.last_hidden_state);
        assert.ok(h.maxDiff <= 1e-4, `last hidden state: max diff ${h.maxDiff}`);
      });
      it(`${c.name}: the preview (one head computed with the forward pass) matches HF's terms for that head`, async () => {
        const layer = c.expected.layers.length - 1;
        const head = model.info.heads - 1;
        const result = await model.explain({ ids: c.input_ids, preview: { layer, head } });
        const want = at(c.expected.layers, layer);
        for (const kind of ['c2c', 'c2p', 'p2c', 'scores'] as const) {
          const w = want[kind];
          if (!w) continue;
          const { maxDiff, maxAbs } = compare(result.previewSlice(layer, head, kind)!, at(w, head));
          assert.ok(maxDiff <= 1e-4 * maxAbs, `layer ${layer} head ${head} ${kind}: max diff ${maxDiff} vs max |x| ${maxAbs}`);
        }
        const p = compare(result.previewSlice(layer, head, 'probs')!, at(want.probs, head));
        assert.ok(p.maxDiff <= 1e-5, `layer ${layer} head ${head} probs: max diff ${p.maxDiff}`);
      });
      it(`${c.name}: the forward pass computing attention one head at a time gives the same states and terms`, async () => {
        const grouped = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2, attentionHeadGroup: 1 });
        try {
          const h = compare((await forwardOnly(grouped, c.input_ids)).hidden, c.expected.last_hidden_state);
          assert.ok(h.maxDiff <= 1e-4, `last hidden state: max diff ${h.maxDiff}`);
          const r = await grouped.explain({ ids: c.input_ids });
          const last = c.expected.layers.length - 1;
          const p = compare((await r.load(last)).probs, at(c.expected.layers, last).probs);
          assert.ok(p.maxDiff <= 1e-5, `layer ${last} probs: max diff ${p.maxDiff}`);
        } finally {
          await grouped.dispose();
        }
      });
      if (c.text !== undefined) {
        it(`${c.name}: the tokenizer gives HF's input ids for the text`, async () => {
          const result = await model.explain({ text: c.text, layers: [0] });
          assert.deepEqual(result.inputIds, c.input_ids);
        });
      }
    }
  });
}

after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
