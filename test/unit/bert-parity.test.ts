// BERT through the real engine (graph + onnxruntime) against Hugging Face's own BertForMaskedLM / BertTokenizer
// outputs for the bert_tiny fixture: tokens and offsets, every layer's scores (≤ 1e-4 of the matrix's largest
// |score|) and probs (≤ 1e-5 absolute), the last hidden state, and the layer-0 decomposition (≤ 1e-4 relative
// per term); and the CLI's JSON for BERT.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forwardOnly } from '../../src/engine/run/input';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { FIXTURES, REPO_ROOT, at, compareNested as compare, field } from './helpers';

const DIR = path.join(FIXTURES, 'bert', 'bert_tiny');
type M3 = number[][][];
interface Case {
  name: string;
  text: string;
  text_pair?: string;
  tokens: string[];
  input_ids: number[];
  token_type_ids: number[];
  offsets: Array<[number, number] | null>;
  expected: {
    scale: number;
    layers: Array<{ scores: M3; probs: M3 }>;
    last_hidden_state: number[][];
    layer0_decomposition: Record<string, M3>;
  };
}
const cases: Case[] = JSON.parse(fs.readFileSync(path.join(DIR, 'expected_outputs.json'), 'utf8')).cases;
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-bert-parity-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

describe('HF parity: bert_tiny', () => {
  let model: OpenModel;
  before(async () => {
    model = await openModel(DIR, { cacheDir, executionProvider: 'cpu', threads: 2 });
  });
  after(() => model.dispose());

  for (const c of cases) {
    it(`${c.name} (n=${c.input_ids.length}): scores ≤ 1e-4 relative, probs ≤ 1e-5, decomposition ≤ 1e-4 relative`, async (t) => {
      const result = await model.explain({ text: c.text, pair: c.text_pair });
      assert.equal(result.model.architecture, 'bert');
      assert.deepEqual(result.inputIds, c.input_ids);
      assert.deepEqual(
        result.tokens.map((x) => x.text),
        c.tokens,
      );
      assert.deepEqual(
        result.tokens.map((x) => (x.special ? null : [x.start, x.end])),
        c.offsets,
      );
      assert.deepEqual(result.tokenTypeIds ?? c.input_ids.map(() => 0), c.token_type_ids);
      assert.ok(Math.abs(result.scale - c.expected.scale) < 1e-6);
      const figures: string[] = [];
      for (const [l, want] of c.expected.layers.entries()) {
        await result.load(l);
        const s = compare(result.tensor(l, 'scores'), want.scores);
        assert.ok(s.maxDiff <= 1e-4 * s.maxAbs, `layer ${l} scores: max diff ${s.maxDiff} vs max |x| ${s.maxAbs}`);
        const p = compare(result.tensor(l, 'probs'), want.probs);
        assert.ok(p.maxDiff <= 1e-5, `layer ${l} probs: max diff ${p.maxDiff}`);
        figures.push(`L${l} scores ${(s.maxDiff / s.maxAbs).toExponential(1)} rel, probs ${p.maxDiff.toExponential(1)} abs`);
      }
      const d = await result.layer0Decomposition();
      for (const term of ['c2c', 'c2p', 'p2c', 'p2p', 'rest'] as const) {
        const r = compare(d[term], field(c.expected.layer0_decomposition, term));
        assert.ok(r.maxDiff <= 1e-4 * r.maxAbs, `layer-0 ${term}: max diff ${r.maxDiff} vs max |x| ${r.maxAbs}`);
        figures.push(`${term} ${(r.maxDiff / r.maxAbs).toExponential(1)}`);
      }
      const { hidden } = await forwardOnly(model, c.input_ids, undefined, result.tokenTypeIds);
      const h = compare(hidden, c.expected.last_hidden_state);
      assert.ok(h.maxDiff <= 1e-4 * h.maxAbs, `last hidden: max diff ${h.maxDiff}`);
      figures.push(`hidden ${h.maxDiff.toExponential(1)} abs`);
      t.diagnostic(figures.join('; '));
      result.release();
    });
  }

  it('a result without layer 0 has no decomposition; DeBERTa-style terms are not claimed', async () => {
    const result = await model.explain({ text: at(cases, 0).text, layers: [1] });
    assert.equal(result.hasDecomposition, false);
    await assert.rejects(result.layer0Decomposition(), /layer-0 decomposition/);
    assert.deepEqual(result.terms, []);
    result.release();
  });

  it('a pair with ids instead of text is refused in one line', async () => {
    await assert.rejects(model.explain({ ids: [5, 6], pair: 'x' }), /sentence pair needs text/);
  });
});

describe('deberta-lens explain on BERT', () => {
  it('JSON adds "architecture": "bert" and "layer0_decomposition"; layers carry scores and probs', () => {
    const c = at(cases, 2);
    const r = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'dist', 'cli.js'),
        'explain',
        '--model',
        DIR,
        '--text',
        c.text,
        '--pair',
        c.text_pair!,
        '--ep',
        'cpu',
        '--cache-dir',
        cacheDir,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.architecture, 'bert');
    assert.deepEqual(j.input_ids, c.input_ids);
    assert.deepEqual(j.token_type_ids, c.token_type_ids);
    assert.equal(j.text_pair, c.text_pair);
    assert.deepEqual(Object.keys(j.layers[0]), ['layer', 'scores', 'probs']);
    assert.deepEqual(Object.keys(j.layer0_decomposition), ['c2c', 'c2p', 'p2c', 'p2p', 'rest']);
    const n = c.input_ids.length;
    // The five parts sum to layer 0's scores.
    for (let h = 0; h < 4; h++) {
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < n; k++) {
          const sum = ['c2c', 'c2p', 'p2c', 'p2p', 'rest'].reduce((a, t) => a + j.layer0_decomposition[t][h][i][k], 0);
          assert.ok(Math.abs(sum - j.layers[0].scores[h][i][k]) < 1e-4, `sum at ${h},${i},${k}`);
        }
      }
    }
  });
});
