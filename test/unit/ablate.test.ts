// Interventions against Hugging Face's own numbers: DebertaV2ForMaskedLM with hooks that change one raw term of
// chosen heads before the softmax (ablation_cases.json, c2p_flip.json), rerun by the tail graph from the first
// affected layer; and the tail graph with nothing removed against the forward graph on every architecture.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { type AblationPlan, parseAblation } from '../../src/engine/run/ablation-spec';
import { int64Feeds } from '../../src/engine/run/input';
import { LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from '../../src/engine/graph/deberta-io';
import { graphInputs } from '../../src/engine/graph/graph-inputs';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { assertClose, assertOneLineError, klFromLogits, logSoftmax } from './head-asserts';
import { FIXTURES, REPO_ROOT, at } from './helpers';

interface Mlm {
  position: number;
  top5_ids: number[];
  top5_logits: number[];
  logits: number[];
}
interface CaseText {
  name: string;
  mlm: Mlm[];
  last_hidden_state: number[][];
}
interface Cases {
  texts: { name: string; input_ids: number[]; mask_positions: number[] }[];
  cases: { ablate: string; mode: 'zero' | 'mean'; texts: CaseText[] }[];
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-ablate-'));
const cacheDir = path.join(tmp, 'cache');
const fixture = (name: string) => path.join(FIXTURES, 'deberta', name);
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The forward graph's layer-l input, relative rows and last hidden state for ids. */
async function forwardStates(model: OpenModel, ids: number[], layer: number) {
  const spec = model.checkpoint.spec;
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  const run = await model.session.run('forward', int64Feeds(graphInputs(spec, ids)), [
    layerInputOutput(layer),
    LAST_HIDDEN,
    ...(relative ? [REL_OUTPUT] : []),
  ]);
  try {
    return {
      state: run.outputs.read(layerInputOutput(layer)),
      last: run.outputs.read(LAST_HIDDEN),
      rel: relative ? run.outputs.read(REL_OUTPUT) : undefined,
      relRows: relative ? at(run.outputs.dims(REL_OUTPUT), 0) : 0,
    };
  } finally {
    run.outputs.release();
  }
}

describe('ablate: every HF intervention case on v3_tiny_mlm_cls', () => {
  const data: Cases = JSON.parse(fs.readFileSync(path.join(fixture('v3_tiny_mlm_cls'), 'ablation_cases.json'), 'utf8'));
  const pristine = JSON.parse(fs.readFileSync(path.join(fixture('v3_tiny_mlm_cls'), 'expected_outputs.json'), 'utf8')).cases as {
    input_ids: number[];
    expected: { mlm: Mlm[] };
  }[];
  it(`${data.cases.length} cases × ${data.texts.length} texts: last hidden state and logits ≤ 1e-4 relative, ids exact, KL and log-prob/rank from HF's full rows`, async () => {
    const model = await open(fixture('v3_tiny_mlm_cls'));
    try {
      for (const c of data.cases) {
        for (const text of data.texts) {
          const want = c.texts.find((x) => x.name === text.name)!;
          const what = `${c.ablate} ${c.mode} on ${text.name}`;
          // The tail graph alone: its last hidden state against HF's.
          const plan = parseAblation(c.ablate, model.checkpoint.spec, c.mode);
          const f = await forwardStates(model, text.input_ids, plan.firstLayer);
          const tail = await model.tails.run(plan, f.state, f.rel, f.relRows, text.input_ids.length);
          assertClose(tail.hidden, want.last_hidden_state.flat(), `${what}: last hidden state`);
          // End to end, as the CLI runs it.
          const r = await model.ablate({ ids: text.input_ids, ablate: c.ablate, mode: c.mode });
          assert.equal(r.ablation.first_layer, plan.firstLayer);
          const before = pristine.find((p) => JSON.stringify(p.input_ids) === JSON.stringify(text.input_ids))!.expected.mlm;
          assert.deepEqual(
            r.after.map((p) => p.position),
            text.mask_positions,
            what,
          );
          want.mlm.forEach((m, k) => {
            const hf = at(before, k);
            assert.deepEqual(
              at(r.before, k).top.map((x) => x.id),
              hf.top5_ids,
              `${what} @${m.position}: ids before`,
            );
            assert.deepEqual(
              at(r.after, k).top.map((x) => x.id),
              m.top5_ids,
              `${what} @${m.position}: ids after`,
            );
            assertClose(
              at(r.after, k).top.map((x) => x.logit),
              m.top5_logits,
              `${what} @${m.position}: logits after`,
            );
            const kl = at(r.kl, k).kl;
            assert.ok(
              Math.abs(kl - klFromLogits(hf.logits, m.logits)) <= 1e-5,
              `${what} @${m.position}: KL ${kl} vs ${klFromLogits(hf.logits, m.logits)}`,
            );
            const tracked = at(r.tracked, k);
            assert.equal(tracked.which, 'top1_before');
            assert.equal(tracked.id, hf.top5_ids[0]);
            assert.ok(Math.abs(tracked.after.logprob - at(logSoftmax(m.logits), tracked.id)) <= 1e-4, `${what}: log-prob after`);
            const trackedLogit = at(m.logits, tracked.id);
            assert.equal(tracked.after.rank, 1 + m.logits.filter((x) => x > trackedLogit).length, `${what}: rank after`);
          });
        }
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('ablate: the c2p flip on the bundled model (samples/ablation.md)', () => {
  interface Side {
    top5_ids: number[];
    top5_logits: number[];
    top5_probs: number[];
  }
  const flip: {
    text: string;
    input_ids: number[];
    mask_position: number;
    before: Side;
    cases: { ablate: string; mode: 'zero'; after: Side & { kl: number; before_top1_logprob: number; before_top1_rank: number } }[];
  } = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'default-model', 'c2p_flip.json'), 'utf8'));
  it('each case flips "him" to ","; logits ≤ 1e-4 relative, probabilities and KL ≤ 1e-5, log-prob and rank of "him" after', async () => {
    const model = await open(path.join(REPO_ROOT, 'models', 'default'));
    try {
      for (const c of flip.cases) {
        const r = await model.ablate({ text: flip.text, ablate: c.ablate, mode: c.mode });
        assert.deepEqual(r.input_ids, flip.input_ids);
        const [b, a] = [at(r.before, 0), at(r.after, 0)];
        assert.equal(a.position, flip.mask_position);
        assert.deepEqual(
          b.top.map((t) => t.id),
          flip.before.top5_ids,
        );
        assertClose(
          b.top.map((t) => t.logit),
          flip.before.top5_logits,
          `${c.ablate}: logits before`,
        );
        assert.deepEqual(
          a.top.map((t) => t.id),
          c.after.top5_ids,
        );
        assertClose(
          a.top.map((t) => t.logit),
          c.after.top5_logits,
          `${c.ablate}: logits after`,
        );
        a.top.forEach((t, k) => assert.ok(Math.abs(t.prob - at(c.after.top5_probs, k)) <= 1e-5, `${c.ablate}: prob ${k}`));
        const kl = at(r.kl, 0).kl;
        assert.ok(Math.abs(kl - c.after.kl) <= 1e-5, `${c.ablate}: KL ${kl} vs ${c.after.kl}`);
        const tracked = at(r.tracked, 0);
        assert.equal(tracked.token, '▁him');
        assert.equal(tracked.before.rank, 1);
        assert.ok(Math.abs(tracked.after.logprob - c.after.before_top1_logprob) <= 1e-4);
        assert.equal(tracked.after.rank, c.after.before_top1_rank);
        assert.equal(at(a.top, 0).token, ',');
      }
    } finally {
      await model.dispose();
    }
  });
});

describe('ablate: the tail graph with nothing removed is the forward pass', () => {
  for (const name of ['v1_tiny', 'v2_tiny', 'v3_tiny']) {
    it(`${name}: from layer 0 and from layer 1, the last hidden state equals the forward graph's (≤ 1e-6 relative)`, async () => {
      const model = await open(fixture(name));
      try {
        const ids = [1, 17, 4, 29, 6, 10, 37, 13, 2];
        for (const firstLayer of [0, 1]) {
          const plan: AblationPlan = { mode: 'mean', layers: new Map(), firstLayer, entries: [] };
          const f = await forwardStates(model, ids, firstLayer);
          const tail = await model.tails.run(plan, f.state, f.rel, f.relRows, ids.length);
          assertClose(tail.hidden, [...f.last], `${name} from ${firstLayer}`, 1e-6);
        }
      } finally {
        await model.dispose();
      }
    });
  }
});

describe('deberta-lens ablate', () => {
  const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
  const cliCache = path.join(tmp, 'cli-cache');
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, 'ablate', '--threads', '2', ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: cliCache },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('a layer, head or term the model has not got: one line each, and nothing built or run', () => {
    const c2pOnly = path.join(tmp, 'c2p-only');
    fs.cpSync(fixture('v3_tiny_mlm_cls'), c2pOnly, { recursive: true });
    const config = JSON.parse(fs.readFileSync(path.join(c2pOnly, 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(c2pOnly, 'config.json'), JSON.stringify({ ...config, pos_att_type: 'c2p' }));
    const text = ['--text', 'attention to [MASK] terms'];
    assertOneLineError(
      cli('--model', fixture('v3_tiny_mlm_cls'), ...text, '--ablate', '2.0:c2p'),
      /"2\.0:c2p": layer 2 does not exist; this model has layers 0…1/,
    );
    assertOneLineError(
      cli('--model', fixture('v3_tiny_mlm_cls'), ...text, '--ablate', '1.0:c2p,1.4:all'),
      /"1\.4:all": head 4 does not exist; this model has heads 0…3/,
    );
    assertOneLineError(
      cli('--model', c2pOnly, ...text, '--ablate', '0.1:p2c'),
      /"0\.1:p2c": this model has no p2c term \(its terms: c2c, c2p\)/,
    );
    assertOneLineError(cli('--model', fixture('v3_tiny_mlm_cls'), ...text, '--ablate', '1:c2p'), /"1:c2p" is not LAYER\.HEAD:TERM/);
    assertOneLineError(cli('--model', fixture('v3_tiny_mlm_cls'), ...text), /--ablate is required/);
    assertOneLineError(cli('--model', fixture('v3_tiny_rtd'), ...text, '--ablate', '0.0:c2p'), /no masked-LM head/);
    assert.equal(fs.existsSync(path.join(cliCache, 'deberta-lens')), false, 'no graph was built');
  });

  it("prints before/after predictions in predict's shape, KL per position and the followed token; --positions follows the original", () => {
    const r = cli(
      '--model',
      fixture('v3_tiny_mlm_cls'),
      '--text',
      'attention to [MASK] and [MASK] terms',
      '--ablate',
      '0.*:c2p,1.1:all',
      '--mean',
      '--positions',
      '2',
      '--top',
      '3',
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.ablation, { entries: ['0.*:c2p', '1.1:all'], mode: 'mean', first_layer: 0, layers_rerun: 2, layers: 2 });
    const positions = (xs: { position: number }[]) => xs.map((x) => x.position);
    assert.deepEqual(positions(out.before), [2, 6, 9]);
    assert.deepEqual(positions(out.after), [2, 6, 9]);
    assert.deepEqual(positions(out.kl), [2, 6, 9]);
    for (const side of [out.before, out.after]) {
      for (const p of side) {
        assert.equal(p.top.length, 3);
        for (const t of p.top) assert.deepEqual(Object.keys(t).sort(), ['id', 'logit', 'prob', 'token']);
      }
    }
    assert.equal(out.before[0].source, 'masked');
    assert.equal(out.tracked[0].which, 'original');
    assert.equal(out.tracked[0].id, out.tokens[2].id);
    assert.equal(out.tracked[0].before.rank, out.before[0].original.rank);
    assert.equal(out.tracked[0].after.rank, out.after[0].original.rank);
    assert.deepEqual(
      out.tracked.slice(1).map((t: { which: string }) => t.which),
      ['top1_before', 'top1_before'],
    );
    assert.ok(out.kl.every((k: { kl: number }) => k.kl >= -1e-6 && Number.isFinite(k.kl)));
  });
});
