// Interventions inside the Enhanced Mask Decoder's passes (ablate entries on layers numLayers = EMD 1 and
// numLayers + 1 = EMD 2) against microsoft/DeBERTa's own MaskedLanguageModel with those heads' terms removed in its
// DisentangledSelfAttention (float64, tools/fixtures/make-emd-intervention-cases.py): before and after, the EMD's
// top-5 at every [MASK], their probabilities, KL(before ‖ after) and the followed token's log-probability.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES, at, rejectsWith } from './helpers';

const EMD = path.join(FIXTURES, 'emd');
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-intervention-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });

interface Run {
  entries: string;
  mode: 'zero' | 'mean';
  after_logits: number[][];
}
interface Case {
  name: string;
  input_ids: number[];
  mask_positions: number[];
  before_logits: number[][];
  runs: Run[];
}

/** log-softmax of a full logits row, float64. */
function logSoftmax(logits: number[]): number[] {
  const max = Math.max(...logits);
  const lse = max + Math.log(logits.reduce((s, x) => s + Math.exp(x - max), 0));
  return logits.map((x) => x - lse);
}
const top5 = (row: number[]) =>
  row
    .map((v, id) => [v, id] as const)
    .sort((a, b) => b[0] - a[0])
    .slice(0, 5)
    .map(([, id]) => id);

describe('interventions in the EMD passes against microsoft/DeBERTa', () => {
  for (const name of ['v3_shared_buckets', 'v2_separate_nobuckets', 'c2p_only_buckets8']) {
    it(`${name}: before/after top-5, probabilities, KL and the followed token ≤ 1e-4`, async (t) => {
      const fixture = JSON.parse(fs.readFileSync(path.join(EMD, name, 'interventions.json'), 'utf8'));
      const model = await open(path.join(EMD, name));
      let worst = 0,
        runs = 0;
      try {
        for (const c of fixture.cases as Case[]) {
          for (const run of c.runs) {
            const r = await model.ablate({ ids: c.input_ids, ablate: run.entries, mode: run.mode, top: 5 });
            assert.equal(r.ablation.first_layer, Math.min(...run.entries.split(',').map((e) => Number(e.split('.')[0]))));
            assert.ok(r.ablation.first_layer >= fixture.layers, 'an EMD layer');
            assert.deepEqual(
              r.before.map((p) => p.position),
              c.mask_positions,
            );
            c.mask_positions.forEach((pos, k) => {
              const lb = logSoftmax(at(c.before_logits, k)),
                la = logSoftmax(at(run.after_logits, k));
              const what = `${c.name} ${run.entries} ${run.mode} #${pos}`;
              assert.deepEqual(
                at(r.before, k).top.map((x) => x.id),
                top5(at(c.before_logits, k)),
                `${what} before`,
              );
              assert.deepEqual(
                at(r.after, k).top.map((x) => x.id),
                top5(at(run.after_logits, k)),
                `${what} after`,
              );
              for (const x of at(r.after, k).top) worst = Math.max(worst, Math.abs(x.prob - Math.exp(at(la, x.id))));
              for (const x of at(r.before, k).top) worst = Math.max(worst, Math.abs(x.prob - Math.exp(at(lb, x.id))));
              const kl = lb.reduce((s, v, id) => s + Math.exp(v) * (v - at(la, id)), 0);
              worst = Math.max(worst, Math.abs(at(r.kl, k).kl - kl));
              const followed = at(r.tracked, k);
              assert.equal(followed.which, 'top1_before');
              worst = Math.max(worst, Math.abs(followed.after.logprob - at(la, followed.id)));
            });
            runs++;
          }
        }
      } finally {
        await model.dispose();
      }
      assert.ok(runs >= 2 || name === 'c2p_only_buckets8');
      assert.ok(worst <= 1e-4, `max |Δ| ${worst}`);
      t.diagnostic(`${name}: ${runs} interventions, max |Δ| over probabilities, KL, log p ${worst.toExponential(2)}`);
    });
  }

  for (const name of ['v3_shared_buckets', 'v2_separate_nobuckets', 'c2p_only_buckets8']) {
    it(`${name}: head ranking in the EMD, every (pass, head, term) removed alone, drops ≤ 1e-4`, async (t) => {
      const fixture = JSON.parse(fs.readFileSync(path.join(EMD, name, 'interventions.json'), 'utf8'));
      const want = fixture.sweep as {
        case: string;
        position: number;
        followed_id: number;
        logprob_before: number;
        mode: 'zero' | 'mean';
        cells: { layer: number; head: number; term: string; logprob_after: number }[];
      };
      const c = (fixture.cases as Case[]).find((x) => x.name === want.case)!;
      const model = await open(path.join(EMD, name));
      let worst: number;
      const seen: number[] = [];
      try {
        const r = await model.sweep({ ids: c.input_ids, terms: ['all'], mode: want.mode, onProgress: (p) => seen.push(p.layer) });
        assert.equal(r.emd, undefined, 'the encoder ranking without emd');
        const e = await model.sweep({
          ids: c.input_ids,
          terms: ['all'],
          mode: want.mode,
          emd: true,
          onProgress: (p) => seen.push(p.layer),
        });
        assert.equal(e.emd, true);
        assert.equal(e.position, want.position);
        assert.equal(e.followed?.id, want.followed_id);
        worst = Math.abs(e.followed.before.logprob - want.logprob_before);
        assert.equal(e.ranking.length, want.cells.length);
        for (const cell of want.cells) {
          const got = e.ranking.find((x) => x.layer === cell.layer && x.head === cell.head && x.term === cell.term);
          assert.ok(got, `cell ${cell.layer}.${cell.head}:${cell.term}`);
          worst = Math.max(worst, Math.abs(got.drop - (want.logprob_before - cell.logprob_after)));
          const row = e.grid[cell.term as 'c2c']![cell.layer - fixture.layers]!;
          assert.equal(row[cell.head], got.drop, 'the grid holds the same drop');
        }
        assert.deepEqual(
          e.ranking.map((x) => x.drop),
          [...e.ranking.map((x) => x.drop)].sort((a, b) => b - a),
        );
        assert.ok(seen.includes(fixture.layers + 1), 'progress reports the EMD layers');
      } finally {
        await model.dispose();
      }
      assert.ok(worst <= 1e-4, `max |Δ| ${worst}`);
      t.diagnostic(`${name}: ${want.cells.length} cells (${want.mode}), max |Δ drop| vs microsoft ${worst.toExponential(2)}`);
    });
  }

  it('refusals: EMD entries mixed with the encoder’s, a layer past EMD 2, an EMD entry on a model without passes', async () => {
    const model = await open(path.join(EMD, 'v3_shared_buckets'));
    try {
      const text = 'a new [MASK] opened beside the new [MASK]';
      await rejectsWith(model.ablate({ text, ablate: '1.0:c2p,2.0:c2p' }), 'invalid-input', /cannot be mixed with the encoder's layers/);
      await rejectsWith(
        model.ablate({ text, ablate: '4.0:c2p' }),
        'invalid-input',
        /layer 4 does not exist; this model has layers 0…1 and the Enhanced Mask Decoder's passes 2 \(EMD 1\) and 3 \(EMD 2\)/,
      );
    } finally {
      await model.dispose();
    }
    const biased = await open(path.join(EMD, 'position_biased'));
    try {
      await rejectsWith(
        biased.sweep({ text: 'a [MASK]', terms: ['all'], emd: true }),
        'unsupported',
        /has no Enhanced Mask Decoder passes to rank/,
      );
      await rejectsWith(
        biased.ablate({ text: 'a [MASK]', ablate: '2.0:c2p' }),
        'invalid-input',
        /layer 2 does not exist; this model has layers 0…1$/,
      );
    } finally {
      await biased.dispose();
    }
  });
});
