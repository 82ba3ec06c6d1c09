// Activation patching against Hugging Face's own code: the corrupted text rerun with the clean run's values put in
// (test/data/fixtures/patching/*.json, tools/fixtures/make-patch-cases.py, float64) — every spec's target value,
// restored fraction and final hidden state; attention-edge knockouts; the identities; and the refusals. Every
// architecture: v3, v1 (HF's modeling_deberta.py), BERT (modeling_bert.py) and a v2 classifier with a conv block.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { PatchResult } from '../../src/engine/api';
import { PatchSessions } from '../../src/engine/run/patch-batch';
import { FIXTURES } from './helpers';

interface Expected {
  logits: number[];
  last_hidden_state: number[][];
}
interface Case {
  name: string;
  clean: { text: string; input_ids: number[]; expected: Expected };
  corrupt: { text: string; input_ids: number[]; expected: Expected };
  target: { kind: 'mlm_logprob' | 'label_logit'; position?: number; token_id?: number; label?: number };
  clean_value: number;
  corrupt_value: number;
  patches: { spec: string; target_value: number; restored_fraction: number; expected: Expected }[];
  knockouts: { spec: string; on_clean: { target_value: number } & Expected; on_corrupt: { target_value: number } & Expected }[];
}
interface Fixture {
  checkpoint: string;
  num_hidden_layers: number;
  cases: Case[];
}

const load = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, 'patching', `${name}.json`), 'utf8')) as Fixture;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patch-'));
const cacheDir = path.join(tmp, 'cache');
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Within 1e-4 absolute + 1e-4 relative. */
const near = (got: number | null | undefined, want: number, what: string) => {
  assert.ok(typeof got === 'number', `${what}: ${got}`);
  assert.ok(Math.abs(got - want) <= 1e-4 + 1e-4 * Math.abs(want), `${what}: ${got} vs ${want}`);
};

function targetOf(c: Case) {
  return c.target.kind === 'mlm_logprob'
    ? { target: { token: c.target.token_id! }, position: c.target.position }
    : { target: { label: c.target.label! } };
}

function lastHidden(r: PatchResult, which: 'patched' | 'clean' | 'corrupt'): PatchResult['clean'] {
  return r[which]!;
}

// v3 (masked LM, classifier), v1 (fused projection), BERT (content-only scores) and v2 with its conv block after layer 0.
for (const name of ['v3_tiny_mlm_cls', 'v3_seqcls_3', 'v1_seqcls', 'bert_seqcls', 'v2_conv_seqcls']) {
  const fx = load(name);
  describe(`patching ${name} against Hugging Face`, () => {
    let model: OpenModel;
    before(async () => (model = await open(path.join(FIXTURES, '..', '..', '..', fx.checkpoint))));
    after(() => model.dispose());
    for (const c of fx.cases) {
      const base = { text: c.clean.text, corrupt: c.corrupt.text, ...targetOf(c) };
      for (const p of c.patches) {
        it(`${c.name}: "${p.spec}" gives HF's target value, restored fraction and logits`, async () => {
          const r = await model.patch({ ...base, patch: p.spec });
          assert.deepEqual(r.input_ids, c.clean.input_ids);
          assert.deepEqual(r.corrupt_ids, c.corrupt.input_ids);
          near(r.clean_value, c.clean_value, 'clean value');
          near(r.corrupt_value, c.corrupt_value, 'corrupt value');
          near(r.patch!.value, p.target_value, 'patched value');
          // The fraction divides by clean − corrupt: its tolerance is the values' over that difference.
          const tol = (3e-4 + 2e-4 * Math.abs(p.target_value)) / Math.abs(c.clean_value - c.corrupt_value);
          assert.ok(Math.abs(r.patch!.restored! - p.restored_fraction) <= tol, `restored ${r.patch!.restored} vs ${p.restored_fraction}`);
          const cls = lastHidden(r, 'patched').classification;
          if (cls) cls.labels.forEach((l, i) => near(l.logit, p.expected.logits[i]!, `logit ${i}`));
        });
      }
      for (const k of c.knockouts) {
        it(`${c.name}: knockout "${k.spec}" on the clean and the corrupted text`, async () => {
          const onCorrupt = await model.patch({ ...base, patch: k.spec });
          near(onCorrupt.patch!.value, k.on_corrupt.target_value, 'on corrupt');
          const onClean = await model.patch({ ...base, corrupt: c.clean.text, patch: k.spec });
          near(onClean.patch!.value, k.on_clean.target_value, 'on clean');
        });
      }
      it(`${c.name}: resid:L at every position gives the clean value for every L`, async () => {
        for (let l = 0; l <= fx.num_hidden_layers; l++) {
          const r = await model.patch({ ...base, patch: `resid:${l}` });
          near(r.patch!.value, c.clean_value, `resid:${l}`);
        }
      });
      it(`${c.name}: a corrupted text equal to the clean one changes nothing; patching nothing gives the corrupted run`, async () => {
        const same = await model.patch({ ...base, corrupt: c.clean.text, patch: '*.*:all,resid:1@3' });
        near(same.patch!.value, c.clean_value, 'corrupt = clean');
        assert.equal(same.patch!.restored, null);
        const nothing = await model.patch({ ...base, patch: '' });
        assert.equal(nothing.patch!.value, nothing.corrupt_value);
        assert.equal(nothing.patch!.restored, 0);
      });
    }
  });
}

describe('patch traces', () => {
  const fx = load('v3_seqcls_3');
  const c = fx.cases[0]!;
  let model: OpenModel;
  before(async () => (model = await open(path.join(FIXTURES, 'task-heads', 'v3_seqcls_3'))));
  after(() => model.dispose());
  it('the causal trace batched equals one rerun per cell, and its last row (the final state) is the clean value at every position', async () => {
    const input = { text: c.clean.text, corrupt: c.corrupt.text, trace: 'resid' as const };
    const batched = await model.patch(input);
    const single = await model.patch({ ...input, batch: false });
    const g = batched.grid!,
      s = single.grid!;
    assert.ok(g.kind === 'resid' && s.kind === 'resid');
    assert.equal(g.value.length, fx.num_hidden_layers + 1);
    assert.ok(batched.timings.batch_size > 1 && single.timings.batch_size === 1);
    g.value.forEach((row, l) => row.forEach((v, i) => near(v, s.value[l]![i]!, `cell ${l},${i}`)));
    // Every position of a state patched at once: resid:L; one position: only the differing ones move the value.
    const same = c.clean.input_ids.map((id, i) => id === c.corrupt.input_ids[i]);
    g.value[0]!.forEach((v, i) => same[i] && near(v, batched.corrupt_value, `unchanged position ${i}`));
  });
  it('patch processes stay up across start layers while their weights fit in a quarter of the room, least recently used stopping first', async () => {
    const L = fx.num_hidden_layers;
    const o = (start: number) => ({ start, terms: false, knock: false });
    const per = (start: number) => {
      const { hiddenSize: D, intermediateSize: I } = model.checkpoint.spec;
      return 4 * (L - start) * (4 * D * D + 2 * D * I);
    };
    // Room for every start layer's process: all stay up.
    const roomy = new PatchSessions(model, () => 1e12);
    try {
      for (let l = 0; l < L; l++) await roomy.start(o(l));
      assert.equal(roomy.pids.length, L);
    } finally {
      await roomy.dispose();
    }
    // A quarter of the room holds the processes from layers 0 and 1 but not also a second one from layer 0 (the one
    // with head-term inputs): starting that stops the oldest.
    const room = 4 * (per(0) + per(1)) + 1;
    const tight = new PatchSessions(model, () => room);
    const terms0 = { start: 0, terms: true, knock: false };
    try {
      await tight.start(o(0));
      await tight.start(o(1));
      assert.equal(tight.pids.length, 2);
      assert.deepEqual(tight.keep(PatchSessions.key(terms0), per(0)), [PatchSessions.key(o(1))]);
      await tight.start(terms0);
      assert.equal(tight.pids.length, 2);
      // Layer 0's again (stopped): with it, neither other fits; it starts afresh when it runs.
      const again = await tight.start(o(0));
      assert.equal(tight.pids.length, 0);
      await again.start();
      assert.equal(tight.pids.length, 1);
    } finally {
      await tight.dispose();
    }
    assert.equal(tight.pids.length, 0);
  });
  it("the flow: its last layer edges into [CLS] move the target as HF's knockouts do; no knockout changes nothing", async () => {
    const r = await model.patch({ text: c.clean.text, corrupt: c.corrupt.text, trace: 'flow', threshold: 0 });
    const g = r.grid!;
    assert.ok(g.kind === 'flow');
    assert.deepEqual(g.target_rows, [0]);
    assert.notEqual(r.corrupt_value, r.clean_value, 'the knockouts run on the clean text, not the corrupted one');
    const last = fx.num_hidden_layers - 1;
    for (const k of c.knockouts) {
      const m = /^knock:(\d+):0->(\d+)$/.exec(k.spec);
      if (!m || Number(m[1]) !== last) continue;
      const edge = g.edges.find((e) => e.layer === last && e.to === 0 && e.from === Number(m[2]));
      assert.ok(edge, k.spec);
      near(edge.change, k.on_clean.target_value - c.clean_value, k.spec);
      assert.ok(['c2c', 'c2p', 'p2c'].includes(edge.term));
    }
    const none = await model.patch({ text: c.clean.text, corrupt: c.clean.text, patch: '' });
    assert.equal(none.patch!.value, none.clean_value);
  });
  it('the head grid matches single patches', async () => {
    const r = await model.patch({ text: c.clean.text, corrupt: c.corrupt.text, trace: 'heads' });
    const g = r.grid!;
    assert.ok(g.kind === 'heads');
    assert.deepEqual(g.axes, ['term', 'layer', 'head']);
    for (const p of c.patches.filter((q) => /^\d\.\d:(c2c|c2p|p2c)$/.test(q.spec))) {
      const [, l, h, t] = /^(\d)\.(\d):(\w+)$/.exec(p.spec)!;
      near(g.value[t as 'c2c']![Number(l)]![Number(h)], p.target_value, p.spec);
    }
  });
});
