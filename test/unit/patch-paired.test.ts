// Patching between texts of different lengths against Hugging Face's own code: clean positions pair with the
// corrupted text's (src/engine/run/patch-align.ts), a state goes to its pair's row, knockouts move the same way
// (test/data/fixtures/patching/paired.json, tools/fixtures/make-patch-cases.py --paired, float64); the causal trace
// leaves unpaired positions empty; what cannot pair is refused in one line.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { pairPositions } from '../../src/engine/run/patch-align';
import { FIXTURES, rejectsWith } from './helpers';

interface Case {
  name: string;
  pairs: number[];
  clean: { text: string; input_ids: number[] };
  corrupt: { text: string; input_ids: number[] };
  target: { kind: 'mlm_logprob' | 'label_logit'; position?: number; token_id?: number; label?: number };
  clean_value: number;
  corrupt_value: number;
  patches: { spec: string; target_value: number; restored_fraction: number }[];
}
const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'patching', 'paired.json'), 'utf8')) as {
  models: { checkpoint: string; num_hidden_layers: number; cases: Case[] }[];
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patch-paired-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const near = (got: number | null | undefined, want: number, what: string) => {
  assert.ok(typeof got === 'number', `${what}: ${got}`);
  assert.ok(Math.abs(got - want) <= 1e-4 + 1e-4 * Math.abs(want), `${what}: ${got} vs ${want}`);
};
const targetOf = (c: Case) =>
  c.target.kind === 'mlm_logprob'
    ? { target: { token: c.target.token_id! }, position: c.target.position }
    : { target: { label: c.target.label! } };

describe('pairing positions', () => {
  const piece = (id: number, start: number, end: number) => ({ id, start, end });
  it('keeps common tokens, pairs a changed span by character offset, and leaves the rest unpaired', () => {
    // [CLS] the cat sat [SEP] → [CLS] the big dog sat [SEP]
    const clean = [piece(1, 0, 0), piece(10, 0, 3), piece(11, 3, 7), piece(12, 7, 11), piece(2, 0, 0)];
    const corrupt = [piece(1, 0, 0), piece(10, 0, 3), piece(13, 3, 7), piece(14, 7, 11), piece(12, 11, 15), piece(2, 0, 0)];
    assert.deepEqual(pairPositions(clean, corrupt), [0, 1, 2, 4, 5]);
    // a token deleted: no counterpart
    assert.deepEqual(pairPositions(corrupt, clean), [0, 1, 2, -1, 3, 4]);
    // "dog" → "dog" + "s": the piece covering the same characters
    const dogs = [piece(1, 0, 0), piece(10, 0, 3), piece(15, 3, 7), piece(16, 7, 8), piece(12, 8, 12), piece(2, 0, 0)];
    const dog = [piece(1, 0, 0), piece(10, 0, 3), piece(17, 3, 7), piece(12, 7, 11), piece(2, 0, 0)];
    assert.deepEqual(pairPositions(dog, dogs), [0, 1, 2, 4, 5]);
  });
});

for (const m of fx.models) {
  describe(`patching between texts of different lengths: ${path.basename(m.checkpoint)} against Hugging Face`, () => {
    const open = () =>
      openModel(path.join(FIXTURES, '..', '..', '..', m.checkpoint), {
        cacheDir: path.join(tmp, 'cache'),
        executionProvider: 'cpu',
        threads: 2,
      });
    for (const c of m.cases) {
      it(`${c.name}: the pairs, every spec's value and restored fraction, and the causal trace's cells`, async () => {
        const model = await open();
        try {
          const base = { text: c.clean.text, corrupt: c.corrupt.text, ...targetOf(c) };
          for (const p of c.patches) {
            const r = await model.patch({ ...base, patch: p.spec });
            assert.deepEqual(r.input_ids, c.clean.input_ids);
            assert.deepEqual(r.corrupt_ids, c.corrupt.input_ids);
            assert.deepEqual(
              r.paired,
              c.pairs.map((j) => (j < 0 ? null : j)),
            );
            near(r.clean_value, c.clean_value, 'clean');
            near(r.corrupt_value, c.corrupt_value, 'corrupt');
            near(r.patch!.value, p.target_value, `"${p.spec}"`);
            const tol = (3e-4 + 2e-4 * Math.abs(p.target_value)) / Math.abs(c.clean_value - c.corrupt_value);
            assert.ok(Math.abs(r.patch!.restored! - p.restored_fraction) <= tol, `"${p.spec}" restored ${r.patch!.restored}`);
          }
          const trace = await model.patch({ ...base, trace: 'resid' });
          const g = trace.grid!;
          assert.equal(g.kind, 'resid');
          if (g.kind !== 'resid') return;
          assert.equal(g.value[0]!.length, c.clean.input_ids.length, 'columns: the clean positions');
          for (const p of c.patches) {
            const one = /^resid:(\d+)@(\d+)$/.exec(p.spec);
            if (one) near(g.value[Number(one[1])]![Number(one[2])], p.target_value, `trace cell ${p.spec}`);
          }
          c.pairs.forEach((j, i) => {
            if (j < 0)
              assert.ok(g.restored.every((row) => row[i] === null) && g.value.every((row) => Number.isNaN(row[i])), `unpaired ${i}`);
          });
        } finally {
          await model.dispose();
        }
      });
    }
  });
}

describe('patching between texts of different lengths: refusals', () => {
  it('head sites, an unpaired position and a target token with no counterpart are refused in one line', async () => {
    const cls = fx.models[0]!;
    const model = await openModel(path.join(FIXTURES, '..', '..', '..', cls.checkpoint), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    try {
      const del = cls.cases.find((c) => c.name === 'the_mat_deleted')!;
      const base = { text: del.clean.text, corrupt: del.corrupt.text };
      await rejectsWith(model.patch({ ...base, patch: '0.1:c2p' }), 'invalid-input', /a head's terms .* must tokenize to the same length/);
      await rejectsWith(model.patch({ ...base, trace: 'heads' }), 'invalid-input', /must tokenize to the same length/);
      await rejectsWith(model.patch({ ...base, patch: 'resid:1@13' }), 'invalid-input', /clean token 13 "▁th" has no counterpart/);
    } finally {
      await model.dispose();
    }
    const mlm = await openModel(path.join(FIXTURES, 'deberta', 'v3_tiny_mlm_cls'), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    try {
      // The [MASK] itself deleted: the followed token has no counterpart.
      await rejectsWith(
        mlm.patch({ text: 'the cat sat on the [MASK].', corrupt: 'the cat sat on the.', patch: 'resid:1' }),
        'invalid-input',
        /the target reads clean token \d+ "\[MASK\]", which has no counterpart/,
      );
    } finally {
      await mlm.dispose();
    }
  });
});
