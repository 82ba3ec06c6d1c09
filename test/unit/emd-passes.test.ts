// The Enhanced Mask Decoder's two passes as the engine exposes them (model.emdPasses) against what microsoft/DeBERTa's
// own MaskedLanguageModel holds in them (float64, recorded inside its DisentangledSelfAttention): H, the query
// I = H + absolute positions, each pass's output, and its c2c/c2p/p2c (microsoft's are divided by the scale) and
// softmax. Fixtures: test/data/fixtures/emd/ (tools/fixtures/make-emd-cases.py).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { EmdPass } from '../../src/engine/api';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES, at, compareNested, rejectsWith } from './helpers';

type Nested = number[][] | number[][][];
interface PassExpected {
  hidden_state: number[][];
  attention?: Record<string, number[][][]>;
}
interface EmdCase {
  name: string;
  input_ids: number[];
  expected: { emd: { kv_hidden_state: number[][]; query: number[][]; passes: PassExpected[] } };
}

const EMD = path.join(FIXTURES, 'emd');
const TOLERANCE = 1e-4;
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-passes-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(EMD, ...parts), 'utf8'));

/** Largest |ours − theirs| over a tensor, asserted within the tolerance. */
function close(got: Float32Array, want: Nested, what: string): number {
  const { maxDiff } = compareNested(got, want);
  assert.ok(maxDiff <= TOLERANCE, `${what}: max |Δ| ${maxDiff}`);
  return maxDiff;
}

describe('Enhanced Mask Decoder passes against microsoft/DeBERTa', () => {
  for (const name of ['v3_shared_buckets', 'v2_separate_nobuckets', 'c2p_only_buckets8']) {
    it(`${name}: H, query, both passes' outputs and attention ≤ 1e-4`, async (t) => {
      const fixture = readJson(name, 'expected_outputs.json');
      const model = await open(path.join(EMD, name));
      let worst = 0,
        terms = 0;
      try {
        for (const c of fixture.cases as EmdCase[]) {
          const r = await model.emdPasses({ ids: c.input_ids });
          const e = c.expected.emd;
          assert.equal(r.layer, fixture.emd_layer);
          assert.ok(Math.abs(r.scale - fixture.scale) < 1e-5, 'scale');
          worst = Math.max(worst, close(r.kv_hidden, e.kv_hidden_state, `${c.name} H`), close(r.query, e.query, `${c.name} query`));
          // The query's position part is what it adds to H.
          const sum = r.kv_hidden.map((x, i) => x + at(r.position, i));
          worst = Math.max(worst, close(sum, e.query, `${c.name} H + position`));
          r.passes.forEach((p: EmdPass, k) => {
            const want = at(e.passes, k);
            worst = Math.max(worst, close(p.hidden, want.hidden_state, `${c.name} pass ${k} output`));
            const att = want.attention;
            if (!att) return;
            const scaled = (x: Float32Array) => x.map((v) => v / r.scale);
            for (const kind of ['c2c', 'c2p', 'p2c'] as const) {
              const wantTerm: number[][][] | undefined = att[`${kind}_scaled`];
              assert.equal(p[kind] !== undefined, wantTerm !== undefined, `${c.name} pass ${k}: ${kind} present as in microsoft's`);
              if (wantTerm) worst = Math.max(worst, close(scaled(p[kind]!), wantTerm, `${c.name} pass ${k} ${kind}`));
            }
            worst = Math.max(worst, close(p.probs, att.probs!, `${c.name} pass ${k} probs`));
            terms++;
          });
        }
      } finally {
        await model.dispose();
      }
      assert.ok(terms >= 4, 'the fixture holds the attention of two cases');
      t.diagnostic(`${name}: max |Δ| over H, query, outputs and attention ${worst.toExponential(2)}`);
    });
  }

  it('refuses with one line where there are no passes', async () => {
    const biased = await open(path.join(EMD, 'position_biased'));
    try {
      await rejectsWith(
        biased.emdPasses({ text: 'a [MASK]' }),
        'unsupported',
        /position_biased_input is true: the Enhanced Mask Decoder is the last layer itself/,
      );
    } finally {
      await biased.dispose();
    }
    const noTable = await open(path.join(EMD, 'bad', 'no_position_embeddings'));
    try {
      await rejectsWith(
        noTable.emdPasses({ text: 'a [MASK]' }),
        'unsupported',
        /no absolute position embeddings \(deberta\.embeddings\.position_embeddings\.weight\)/,
      );
    } finally {
      await noTable.dispose();
    }
    const short = await open(path.join(EMD, 'bad', 'position_table_short'));
    try {
      const long = readJson('bad', 'position_table_short', 'bad_input.json').long_case;
      await rejectsWith(
        short.emdPasses({ ids: long.input_ids }),
        'invalid-input',
        /has only 24 rows.*shorten the text to at most 24 tokens/,
      );
    } finally {
      await short.dispose();
    }
  });
});
