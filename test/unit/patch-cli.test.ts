// Patch specs as parsed, the refusals (one line each, before anything runs), the RTD target, and `deberta-lens patch`.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { parsePatch } from '../../src/engine/run/patch-spec';
import { assertOneLineError } from './head-asserts';
import { FIXTURES, REPO_ROOT, rejectsWith } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patch-cli-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const SEQCLS = path.join(FIXTURES, 'task-heads', 'v3_seqcls_3');
const CLEAN = 'the cat sat on the mat.',
  CORRUPT = 'the dog sat on the mat.';

describe('patch specs', () => {
  it('expands heads, layers and positions, and starts the rerun at the first layer touched', async () => {
    const spec = (await loadCheckpoint(SEQCLS, { hash: false })).spec; // 2 layers, 4 heads
    const p = parsePatch('1.*:c2c, 0.2:out,resid:2@3,resid:2@1,knock:1:0->4', spec, 21);
    assert.deepEqual(p.entries, ['1.*:c2c', '0.2:out', 'resid:2@3', 'resid:2@1', 'knock:1:0->4']);
    assert.deepEqual(p.heads.get(1), { c2c: [0, 1, 2, 3] });
    assert.deepEqual(p.heads.get(0), { out: [2] });
    assert.deepEqual(p.resid.get(2), [1, 3]);
    assert.deepEqual(p.knock.get(1), [[0, 4]]);
    assert.equal(p.firstLayer, 0);
    assert.deepEqual([...parsePatch('*.*:all', spec).heads.keys()], [0, 1]);
    assert.equal(parsePatch('resid:2', spec).firstLayer, 1, 'the final state: the last layer reruns');
    assert.equal(parsePatch('', spec).firstLayer, 2, 'nothing: no rerun');
  });
  it('names what does not exist, in one line', async () => {
    const spec = (await loadCheckpoint(SEQCLS, { hash: false })).spec;
    const bad: [string, RegExp][] = [
      ['2.0:c2c', /layer 2 does not exist; this model has layers 0…1/],
      ['0.4:c2p', /head 4 does not exist; this model has heads 0…3/],
      ['resid:3', /layer 3 does not exist; this model has layers 0…2/],
      ['resid:1@21', /position 21 does not exist; the texts have tokens 0…20/],
      ['knock:0:1->30', /position 30 does not exist/],
      ['0.0:qk', /"qk" is not a term/],
      ['layer3', /is not L\.H:c2c/],
    ];
    for (const [text, re] of bad) assert.throws(() => parsePatch(text, spec, 21), re, text);
  });
});

describe('patch refusals and the RTD target', () => {
  let model: OpenModel;
  const cacheDir = path.join(tmp, 'cache');
  before(async () => (model = await openModel(SEQCLS, { cacheDir, executionProvider: 'cpu', threads: 2 })));
  after(() => model.dispose());
  it('refuses, before anything runs: lengths that differ, a bad spec, an unknown label, no corrupted text', async () => {
    await rejectsWith(
      model.patch({ text: CLEAN, corrupt: 'the big dog sat on the mat.', patch: '0.0:c2c' }),
      'invalid-input',
      /21 tokens and the corrupted one 2\d/,
    );
    await rejectsWith(model.patch({ text: CLEAN, corrupt: CORRUPT, patch: 'resid:1@99' }), 'invalid-input', /position 99 does not exist/);
    await rejectsWith(
      model.patch({ text: CLEAN, corrupt: CORRUPT, patch: '0.0:c2c', target: { label: 'maybe' } }),
      'invalid-input',
      /not one of this head's labels/,
    );
    await rejectsWith(model.patch({ text: CLEAN, patch: '0.0:c2c' }), 'invalid-input', /needs a corrupted text/);
    await rejectsWith(model.patch({ text: CLEAN, corrupt: CORRUPT }), 'invalid-input', /nothing to patch/);
  });
  it('a target on a checkpoint with no head is refused', async () => {
    const bare = await openModel(path.join(FIXTURES, 'deberta', 'v2_tiny'), { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      await rejectsWith(bare.patch({ text: CLEAN, corrupt: CORRUPT, patch: '0.0:c2c' }), 'unsupported', /no prediction head/);
    } finally {
      await bare.dispose();
    }
  });
  it('an RTD-only checkpoint follows the RTD logit at --position; resid:L gives its clean value', async () => {
    const rtd = await openModel(path.join(FIXTURES, 'deberta', 'v3_tiny_rtd'), { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      await rejectsWith(rtd.patch({ text: CLEAN, corrupt: CORRUPT, patch: 'resid:1' }), 'invalid-input', /name its position/);
      const r = await rtd.patch({ text: CLEAN, corrupt: CORRUPT, patch: 'resid:1', position: 4 });
      assert.equal(r.target.kind, 'rtd');
      const rtdAt = (p: typeof r.clean) => p.rtd![4]!.logit;
      assert.ok(Math.abs(r.clean_value - rtdAt(r.clean)) < 1e-5 && Math.abs(r.corrupt_value - rtdAt(r.corrupt)) < 1e-5);
      assert.ok(Math.abs(r.patch!.value - r.clean_value) < 1e-4, `${r.patch!.value} vs ${r.clean_value}`);
    } finally {
      await rtd.dispose();
    }
  });
});

describe('patch (CLI)', () => {
  const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, 'patch', '--threads', '2', '--model', SEQCLS, ...args], {
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cli-cache') },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'patching', 'v3_seqcls_3.json'), 'utf8'));
  const c = fixture.cases[0];

  it('prints clean, corrupt and patched as predict does, with restored equal to HF', () => {
    const want = c.patches.find((p: { spec: string }) => p.spec === '0.1:out,1.2:c2c');
    const r = cli('--text', CLEAN, '--corrupt', CORRUPT, '--patch', want.spec);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    for (const k of ['clean', 'corrupt', 'patched']) assert.equal(out[k].task, 'sequence-classification', k);
    assert.ok(Math.abs(out.values.patched - want.target_value) < 2e-4);
    assert.ok(Math.abs(out.restored - want.restored_fraction) < 5e-3);
    assert.equal(out.patched.classification.labels[0].logit, out.values.patched);
    assert.deepEqual(out.differing_positions, c.differing_positions);
  });
  it('--trace heads prints a grid with named axes', () => {
    const r = cli('--text', CLEAN, '--corrupt', CORRUPT, '--trace', 'heads');
    assert.equal(r.code, 0, r.stderr);
    const g = JSON.parse(r.stdout).grid;
    assert.deepEqual(g.axes, ['term', 'layer', 'head']);
    assert.deepEqual([g.restored.c2p.length, g.restored.c2p[0].length], [2, 4]);
  });
  it('--trace flow needs no corrupted text and prints the kept edges with their terms', () => {
    const r = cli('--text', CLEAN, '--trace', 'flow', '--threshold', '0.05');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual([out.grid.kind, out.grid.threshold, out.values.clean], ['flow', 0.05, out.values.corrupt]);
    assert.ok(out.grid.edges.every((e: { change: number; term: string }) => Math.abs(e.change) > 0.05 && /^c2[cp]|p2c$/.test(e.term)));
  });
  it('a multiple-choice head: the choice given as --pair is the target; a resid trace; --target and no choice refused', () => {
    const mc = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'patching', 'v3_mc.json'), 'utf8')).cases[1];
    const MC = ['--model', path.join(FIXTURES, 'task-heads', 'v3_mc')];
    const r = cli(...MC, '--text', mc.clean.text, '--pair', mc.clean.pair, '--corrupt-pair', mc.corrupt.pair, '--patch', 'resid:1');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual([out.target.kind, out.target.choice], ['choice', mc.clean.pair]);
    assert.deepEqual(
      out.corrupt.multiple_choice.choices.map((x: { text: string }) => x.text),
      [mc.corrupt.pair],
    );
    const want = mc.patches.find((p: { spec: string }) => p.spec === 'resid:1');
    assert.ok(Math.abs(out.values.patched - want.target_value) < 2e-4, `${out.values.patched} vs ${want.target_value}`);
    const t = cli(...MC, '--text', mc.clean.text, '--pair', mc.clean.pair, '--corrupt-pair', mc.corrupt.pair, '--trace', 'resid');
    assert.equal(t.code, 0, t.stderr);
    const g = JSON.parse(t.stdout).grid;
    assert.deepEqual(g.axes, ['layer', 'position']);
    // The final state (the last row) restores the clean choice score at every position the texts share.
    assert.ok(Math.abs(g.restored.at(-1)[0] - 1) < 1e-4);
    assertOneLineError(
      cli(
        ...MC,
        '--text',
        mc.clean.text,
        '--pair',
        mc.clean.pair,
        '--corrupt-pair',
        mc.corrupt.pair,
        '--patch',
        'resid:1',
        '--target',
        'label:0',
      ),
      /follows the score of the choice given as the pair .* drop --target/,
    );
    assertOneLineError(
      cli(...MC, '--text', mc.clean.text, '--corrupt', mc.corrupt.text, '--patch', 'resid:1'),
      /give the prompt as the text and the choice as --pair/,
    );
  });
  it('refuses bad flags in one line', () => {
    assertOneLineError(cli('--text', CLEAN, '--patch', '0.0:c2c'), /--text CLEAN --corrupt CORRUPT/);
    assertOneLineError(cli('--text', CLEAN, '--corrupt', CORRUPT), /give --patch SPEC/);
    assertOneLineError(cli('--text', CLEAN, '--corrupt', CORRUPT, '--trace', 'paths'), /--trace takes heads/);
    assertOneLineError(
      cli('--text', CLEAN, '--corrupt', CORRUPT, '--patch', '0.0:c2c', '--threshold', '1'),
      /--threshold belongs to --trace flow/,
    );
    assertOneLineError(cli('--text', CLEAN, '--corrupt', CORRUPT, '--patch', '7.0:c2c'), /layer 7 does not exist/);
    assertOneLineError(cli('--text', CLEAN, '--corrupt', 'a dog', '--patch', '0.0:c2c'), /must tokenize to the same length/);
  });
});
