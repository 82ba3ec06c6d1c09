// The Distance and Term shares views on a BERT result (the bert_tiny fixture, real engine, the host's request
// path): layer 0's c2c/c2p/p2c/p2p by δ and the per-head shares of all five split terms, against the same
// statistics computed here, in a few lines, straight from Hugging Face's layer-0 split stored in the fixture.
// Later layers say they have no split; the views built on DeBERTa's relative terms refuse in one line.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { openModel, type ExplainResult, type LensModel } from '../../src/engine';
import { ablation, buckets, distance, rollout, shares } from '../../src/extension/lens/analysis-requests';
import { fromBuffer } from '../../src/shared/protocol/lens';
import { FIXTURES, at } from './helpers';

const BERT = path.join(FIXTURES, 'bert', 'bert_tiny');
const SPLIT = ['c2c', 'c2p', 'p2c', 'p2p', 'rest'] as const;
interface Case {
  name: string;
  text?: string;
  input_ids: number[];
  expected: { layer0_decomposition: Record<(typeof SPLIT)[number], number[][][]> };
}
const cases = (): Case[] =>
  (JSON.parse(fs.readFileSync(path.join(BERT, 'expected_outputs.json'), 'utf8')).cases as Case[]).filter(
    (c) => c.text && !c.name.includes('pair'),
  );

/** Reference: mean of m[i][j] over the cells with i − j = δ, indexed δ + n − 1 (rows `rows` only). */
function meanByDelta(m: number[][], rows: number[]): number[] {
  const n = m.length;
  const sum = new Array<number>(2 * n - 1).fill(0);
  const count = new Array<number>(2 * n - 1).fill(0);
  for (const i of rows) {
    for (let j = 0; j < n; j++) {
      const d = i - j + n - 1;
      sum[d] = at(sum, d) + at(at(m, i), j);
      count[d] = at(count, d) + 1;
    }
  }
  return sum.map((s, k) => (count[k] ? s / count[k] : NaN));
}

/** Reference: per head, the mean over cells of |t| / (|c2c| + |c2p| + |p2c| + |p2p| + |rest|). */
function shareOf(split: Case['expected']['layer0_decomposition'], head: number, term: (typeof SPLIT)[number]): number {
  const cell = (t: (typeof SPLIT)[number], i: number, j: number) => at(at(at(split[t], head), i), j);
  const n = at(split.c2c, head).length;
  let acc = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const total = SPLIT.reduce((a, t) => a + Math.abs(cell(t, i, j)), 0);
      acc += Math.abs(cell(term, i, j)) / total;
    }
  }
  return acc / (n * n);
}

let bert: LensModel;
before(async () => {
  bert = await openModel(BERT, { executionProvider: 'cpu' });
});
after(async () => {
  await bert?.dispose();
});

async function explained(c: Case, use: (r: ExplainResult) => Promise<void>): Promise<void> {
  const r = await bert.explain({ text: c.text! });
  try {
    assert.deepEqual(r.inputIds, c.input_ids, `${c.name}: the fixture's tokens`);
    await use(r);
  } finally {
    r.release();
  }
}

test("BERT Distance, layer 0: c2c, c2p, p2c, p2p by δ equal the means of HF's split (all rows and one query row)", async () => {
  for (const c of cases()) {
    await explained(c, async (r) => {
      const n = r.n;
      const split = c.expected.layer0_decomposition;
      const scale = Math.max(...SPLIT.flatMap((t) => split[t].flat(2).map(Math.abs)));
      for (const head of [0, r.heads - 1]) {
        for (const query of [null, 2]) {
          const got = await distance(r, 0, head, query);
          assert.equal(got.split, 'bert-layer0');
          assert.deepEqual(Object.keys(got.series).sort(), ['c2c', 'c2p', 'p2c', 'p2p', 'probs']);
          for (const t of ['c2c', 'c2p', 'p2c', 'p2p'] as const) {
            const mean = fromBuffer(got.series[t]!.mean, 2 * n - 1);
            const want = meanByDelta(at(split[t], head), query === null ? [...Array(n).keys()] : [query]);
            want.forEach((w, k) => {
              if (Number.isNaN(w)) assert.ok(Number.isNaN(mean[k]), `${c.name} h${head} ${t} δ=${k - n + 1}: no cell, got ${mean[k]}`);
              else
                assert.ok(
                  Math.abs(at(mean, k) - w) <= 1e-4 * scale,
                  `${c.name} h${head} q${query} ${t} δ=${k - n + 1}: ${mean[k]} vs HF ${w}`,
                );
            });
          }
        }
      }
    });
  }
});

test("BERT Distance, layer 1: no split (probs only, said so); DeBERTa's c2p/p2c series never appear for BERT", async () => {
  await explained(at(cases(), 0), async (r) => {
    const got = await distance(r, 1, 0, null);
    assert.equal(got.split, 'bert-none');
    assert.deepEqual(Object.keys(got.series), ['probs']);
  });
});

test("BERT Term shares: layer 0 per head, five shares by the DeBERTa rule, equal to HF's split; they sum to 1", async () => {
  for (const c of cases()) {
    await explained(c, async (r) => {
      const got = await shares(r, 'uniform');
      assert.equal(got.split, 'bert-layer0');
      assert.deepEqual(got.layers, [0]);
      const H = r.heads;
      const arrays = {
        c2c: fromBuffer(got.content, H),
        c2p: fromBuffer(got.c2p!, H),
        p2c: fromBuffer(got.p2c!, H),
        p2p: fromBuffer(got.p2p!, H),
        rest: fromBuffer(got.rest!, H),
      };
      for (let h = 0; h < H; h++) {
        let total = 0;
        for (const t of SPLIT) {
          const want = shareOf(c.expected.layer0_decomposition, h, t);
          const share = at(arrays[t], h);
          assert.ok(Math.abs(share - want) <= 1e-4, `${c.name} head ${h} ${t}: ${share} vs HF ${want}`);
          total += share;
        }
        assert.ok(Math.abs(total - 1) < 1e-5, `${c.name} head ${h}: shares sum to ${total}`);
      }
      assert.equal(got.labels.length, H);
    });
  }
});

test('BERT: Softmax ablation, the bucket lens and rollout presets refuse in one line naming BERT', async () => {
  await explained(at(cases(), 0), async (r) => {
    const oneLine = (e: unknown) => e instanceof Error && /BERT has absolute positions/.test(e.message) && !e.message.includes('\n');
    await assert.rejects(ablation(r, 0, 0, 'content-only'), oneLine);
    assert.throws(() => buckets(r, undefined), oneLine);
    await assert.rejects(rollout(r, 'content-only'), oneLine);
    const real = await rollout(r, 'all');
    assert.equal(real.n, r.n);
  });
});
