// The intervened run's attention (what the views and the Diff read) against Hugging Face's: the last layer's
// probabilities of every intervention in ablation_cases.json, and the intervened layer's own head (zeroed c2p of
// layer 1, head 0: expected_outputs.json's `ablation`), computed with HF's code and hooks, not by the engine.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { assertClose } from './head-asserts';
import { FIXTURES, at } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-ablated-run-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dir = path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls');

describe('explainAblated: the intervened run as a result', () => {
  it("every case × text: the last layer's probs ≤ 1e-4 relative to HF; untouched earlier layers equal the plain run", async () => {
    const data = JSON.parse(fs.readFileSync(path.join(dir, 'ablation_cases.json'), 'utf8')) as {
      texts: { name: string; input_ids: number[] }[];
      cases: { ablate: string; mode: 'zero' | 'mean'; texts: { name: string; last_layer_probs: number[][][] }[] }[];
    };
    const model = await openModel(dir, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 2 });
    try {
      for (const c of data.cases) {
        for (const text of data.texts) {
          const want = c.texts.find((t) => t.name === text.name)!;
          const r = await model.explainAblated({ ids: text.input_ids, ablate: c.ablate, mode: c.mode });
          const last = at(r.layers, r.layers.length - 1);
          await r.load(last);
          assertClose(r.tensor(last, 'probs'), want.last_layer_probs.flat(2), `${c.ablate} ${c.mode} ${text.name}: last layer probs`);
          r.release();
        }
      }
      // Layer 0 is untouched by 1.x entries: the same numbers as the plain explain.
      const ids = at(data.texts, 0).input_ids;
      const plain = await model.explain({ ids });
      const ablated = await model.explainAblated({ ids, ablate: '1.0:c2p' });
      await Promise.all([plain.load(0), ablated.load(0)]);
      assert.deepEqual(ablated.tensor(0, 'probs'), plain.tensor(0, 'probs'));
    } finally {
      await model.dispose();
    }
  });

  it("the intervened layer: head 0 of layer 1 has c2p = 0 and HF's probabilities; the other heads are the plain run's", async () => {
    const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected_outputs.json'), 'utf8')) as {
      cases: { input_ids: number[]; ablation: { layer1_head0_probs: number[][] } }[];
    };
    const model = await openModel(dir, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 2 });
    try {
      for (const c of expected.cases) {
        const r = await model.explainAblated({ ids: c.input_ids, ablate: '1.0:c2p' });
        const plain = await model.explain({ ids: c.input_ids });
        await Promise.all([r.load(1), plain.load(1)]);
        assertClose(r.slice(1, 0, 'probs'), c.ablation.layer1_head0_probs.flat(), 'layer 1 head 0 probs');
        assert.ok(
          r.slice(1, 0, 'c2p').every((x) => x === 0),
          'the removed term is shown as the run used it',
        );
        assert.deepEqual(r.slice(1, 1, 'probs'), plain.slice(1, 1, 'probs'));
        assert.deepEqual(r.slice(1, 0, 'c2c'), plain.slice(1, 0, 'c2c'));
      }
    } finally {
      await model.dispose();
    }
  });
});
