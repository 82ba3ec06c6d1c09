// What the extension says and offers when a run fails or takes long: the buttons each refusal gets (the BERT twin's
// position table against the maxTokens setting, on the real engine), the explain estimate before a run, the progress
// lines, where Select Model saves, and the panel's small consistency rules (the ranked term, log colours, the Diff).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputTooLongError, LensError } from '../../src/engine';
import { graphFlops } from '../../src/engine/graph/flops';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { errorActions, explainError, ModelOpenError, positionLimited } from '../../src/extension/common/messages';
import {
  DEFAULT_FLOPS_PER_MS,
  estimatedLayer,
  explainPercent,
  explainRunningText,
  explainStartText,
  formatDuration,
  percentStep,
  RateBook,
  remainingMs,
  sweepText,
} from '../../src/extension/common/work-progress';
import { modelSettingTarget } from '../../src/extension/model/setting-target';
import { openedKind, scalingFor } from '../../webview/lens/state/nav';
import { diffOverCurrent, editedLine } from '../../webview/lens/views/diff-model';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-honest-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

const LONG_TEXT = Array.from({ length: 60 }, (_, k) => `The river bank number ${k} was quiet that morning.`).join(' ');

describe('refusals for length, on the real engine', () => {
  let twin: OpenModel;
  let deberta: OpenModel;
  before(async () => {
    twin = await openModel('bert-twin', { cacheDir });
    deberta = await openModel('default', { cacheDir, maxTokens: 64 });
  });
  after(async () => {
    await twin.dispose();
    await deberta.dispose();
  });

  it("the BERT twin's 128-position refusal offers another model, never the maxTokens setting", async () => {
    const e = await twin.estimate({ text: LONG_TEXT }).then(
      () => assert.fail('a text past 128 positions was estimated'),
      (x: unknown) => x,
    );
    assert.ok(e instanceof InputTooLongError, String(e));
    assert.equal(e.cut.limited_by, 'positions');
    assert.ok(positionLimited(e));
    assert.deepEqual(errorActions(e), ['Select Model…']);
    assert.deepEqual(errorActions(e, { selectFits: true }), ['Select Text That Fits', 'Select Model…']);
    // No setting is named: raising maxTokens cannot help a position table.
    const shown = explainError(e, 512) as Error;
    assert.doesNotMatch(shown.message, /maxTokens/);
    // Compare names the model and keeps the cut: the same buttons.
    const named = new InputTooLongError(`bert-twin: ${e.message}`, e.cut);
    assert.deepEqual(errorActions(explainError(named, 512)), ['Select Model…']);
  });

  it('a refusal by maxTokens offers the setting (and the text that fits when the command can select it)', async () => {
    const e = await deberta.estimate({ text: LONG_TEXT }).then(
      () => assert.fail('a text past maxTokens was estimated'),
      (x: unknown) => x,
    );
    assert.ok(e instanceof InputTooLongError);
    assert.equal(e.cut.limited_by, 'maxTokens');
    assert.deepEqual(errorActions(e), ['Open Max Tokens Setting']);
    assert.deepEqual(errorActions(e, { selectFits: true }), ['Select Text That Fits', 'Open Max Tokens Setting']);
    assert.match((explainError(e, 64) as Error).message, /debertaLens\.maxTokens = 64/);
  });

  it('the estimate counts the tokens explain reads, with the FLOPs and memory of that length', async () => {
    const short = await deberta.estimate({ text: 'The river bank was quiet.' });
    const r = await deberta.explain({ text: 'The river bank was quiet.' });
    assert.equal(short.tokens, r.n);
    assert.equal(short.layers, r.model.layers);
    const long = await deberta.estimate({ text: 'The river bank was quiet. '.repeat(8) });
    assert.ok(long.tokens > 4 * short.tokens, `${long.tokens} vs ${short.tokens}`);
    assert.equal(long.flops, graphFlops(deberta.checkpoint.spec, long.tokens), 'the graph FLOPs count of what explain runs');
    assert.ok(long.flops > short.flops);
    assert.ok(long.bytes > short.bytes);
    r.release();
  });

  it('other failures keep their own buttons', () => {
    assert.deepEqual(errorActions(new ModelOpenError('no config.json', 'not-found')), ['Select Model…', 'Open Model Setting', 'Show Log']);
    assert.deepEqual(errorActions(new LensError('nothing selected', 'invalid-input')), []);
    const memory = new LensError('the input is 9000 tokens: explaining it needs about 9 GB of memory', 'too-long');
    assert.deepEqual(errorActions(memory, { selectFits: true }), ['Open Max Tokens Setting'], 'no cut: nothing to select');
    const positions = new LensError(
      'the input is 300 tokens, but this model has absolute positions for only 128: select less text',
      'too-long',
    );
    assert.deepEqual(errorActions(positions), ['Select Model…']);
    assert.deepEqual(errorActions(new Error('boom')), ['Show Log']);
  });
});

describe('progress lines', () => {
  it('a rate is measured per model, from the timed run closest in size; tiny runs do not count', () => {
    const book = new RateBook();
    assert.deepEqual(book.rate('m'), { flopsPerMs: DEFAULT_FLOPS_PER_MS, measured: false });
    book.record('m', 1e9, 10); // 10 ms: fixed costs, not a rate
    assert.equal(book.rate('m').measured, false);
    book.record('m', 1e10, 1000);
    assert.deepEqual(book.rate('m', 1e12), { flopsPerMs: 1e7, measured: true });
    book.record('m', 1e12, 200_000); // long runs are slower per FLOP
    assert.equal(book.rate('m', 2e10).flopsPerMs, 1e7, 'a short text: the short run');
    assert.equal(book.rate('m', 5e11).flopsPerMs, 5e6, 'a long text: the long run');
    assert.equal(book.etaMs('m', 2e12), 400_000);
    book.record('m', 1.1e10, 500); // about the same size: replaces the older timing
    assert.equal(book.rate('m', 1e10).flopsPerMs, 2.2e7);
    assert.equal(book.rate('other').measured, false);
  });

  it('rates are kept for the next session; a malformed snapshot is dropped', () => {
    const saved: unknown[] = [];
    const book = new RateBook(undefined, (s) => saved.push(s));
    book.record('m', 1e10, 1000);
    assert.deepEqual(saved, [{ m: [{ flops: 1e10, perMs: 1e7 }] }]);
    const next = new RateBook(saved[0]);
    assert.deepEqual(next.rate('m', 1e10), { flopsPerMs: 1e7, measured: true });
    const bad = new RateBook({ m: [{ flops: -1, perMs: 3 }, 'x', null], n: 'nope', o: [{ flops: 5, perMs: 2 }] });
    assert.deepEqual(bad.snapshot(), { o: [{ flops: 5, perMs: 2 }] });
    assert.deepEqual(new RateBook('junk').snapshot(), {});
  });

  it('a long explain says how long before it starts; a short one does not', () => {
    const long = explainStartText({ tokens: 1952, layers: 12, etaMs: 31_000, measured: true });
    assert.equal(long, 'forward pass, 12 layers, 1,952 tokens — this will take about 31 s…');
    const guess = explainStartText({ tokens: 1952, layers: 12, etaMs: 31_000, measured: false, pair: true });
    assert.match(guess, /^forward pass, 12 layers, a sentence pair, 1,952 tokens — this will take about 31 s \(a first guess/);
    assert.equal(explainStartText({ tokens: 30, layers: 6, etaMs: 200, measured: true }), 'forward pass, 6 layers, 30 tokens…');
    assert.equal(
      explainRunningText({ tokens: 1952, layers: 12, etaMs: 31_000, elapsedMs: 12_400 }),
      'forward pass, 1,952 tokens: about layer 5 of 12 · 12 s so far · about 19 s left',
    );
    const late = explainRunningText({ tokens: 10, layers: 6, etaMs: 1000, elapsedMs: 4000 });
    assert.match(late, /about layer 6 of 6 · 4 s so far · finishing \(longer than estimated\)/);
    assert.equal(estimatedLayer({ layers: 12, etaMs: 31_000, elapsedMs: 0 }), 1);
    assert.equal(estimatedLayer({ layers: 12, etaMs: 0, elapsedMs: 500 }), 1);
    assert.deepEqual(
      [0, 15_500, 31_000, 60_000].map((elapsedMs) => explainPercent({ etaMs: 31_000, elapsedMs })),
      [0, 50, 95, 95],
    );
  });

  it('sweeps say the stage, layer i of L, the count and the time left', () => {
    assert.equal(
      sweepText({ stage: 'ranking', unit: 'reruns', done: 36, total: 144, layer: 2, layers: 12, elapsedMs: 9000 }),
      'ranking · layer 3 of 12 · 36 of 144 reruns · about 27 s left',
    );
    assert.equal(
      sweepText({ stage: 'masking', unit: 'variants', done: 0, total: 40, elapsedMs: 100 }),
      'masking · 0 of 40 variants · estimating…',
    );
    assert.equal(remainingMs(0, 10, 500), undefined);
    assert.equal(remainingMs(10, 10, 500), 0);
    assert.equal(remainingMs(5, 10, 500), 500);
    assert.equal(formatDuration(125_000), '2 min 5 s');
    assert.equal(formatDuration(120_000), '2 min');
    assert.equal(formatDuration(400), '< 1 s');
    assert.equal(percentStep(0, 36, 144), 25);
    assert.equal(percentStep(140, 200, 144), (100 * 4) / 144, 'never past the total');
    assert.equal(percentStep(0, 5, 0), 0);
  });
});

describe('Select Model saves where the value in effect comes from', () => {
  it('a workspace value is replaced in the workspace, else the user scope (named as Remote in a remote window)', () => {
    assert.deepEqual(modelSettingTarget({ globalValue: 'a', workspaceValue: 'b' }, undefined), {
      scope: 'workspace',
      where: 'the Workspace settings',
    });
    assert.deepEqual(modelSettingTarget({ globalValue: 'a' }, undefined), { scope: 'user', where: 'the User settings' });
    assert.deepEqual(modelSettingTarget(undefined, undefined), { scope: 'user', where: 'the User settings' });
    const remote = modelSettingTarget({}, 'ssh-remote');
    assert.equal(remote.scope, 'user');
    assert.match(remote.where, /Remote \[ssh-remote\] settings, which override User settings/);
  });
});

describe('panel consistency', () => {
  it('a ranked head opens in the term it was ranked by (BERT: its scores)', () => {
    const deberta = ['c2c', 'c2p', 'p2c', 'scores', 'probs'] as const;
    assert.equal(openedKind('c2p', deberta), 'c2p');
    assert.equal(openedKind('p2c', ['c2c', 'c2p', 'scores', 'probs']), 'scores', 'a term the picker lacks');
    assert.equal(openedKind('c2c', ['scores', 'probs']), 'scores', 'BERT ranks whole scores');
    assert.equal(openedKind('c2c', ['probs']), undefined);
  });

  it('log colours apply to probs only', () => {
    assert.equal(scalingFor('log', 'probs'), 'log');
    for (const k of ['c2c', 'c2p', 'p2c', 'scores'] as const) assert.equal(scalingFor('log', k), 'linear', k);
    assert.equal(scalingFor('row', 'c2c'), 'row');
    assert.equal(scalingFor(undefined, 'probs'), 'row-log', 'the default ranks keys within a row');
    assert.equal(scalingFor(undefined, 'c2c'), 'linear');
  });

  it('the Diff keeps the tokens an edit inserted, with no value, and names them', () => {
    // previous: a b c (3), current: a X b c (4); matched a→0, b→2, c→3.
    const pairs: [number, number][] = [
      [0, 0],
      [1, 2],
      [2, 3],
    ];
    const matched = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const { values, inserted } = diffOverCurrent(matched, pairs, 4);
    assert.deepEqual(inserted, [1]);
    assert.equal(values.length, 16);
    assert.equal(values[0 * 4 + 0], 1);
    assert.equal(values[0 * 4 + 2], 2);
    assert.equal(values[2 * 4 + 3], 6);
    assert.equal(values[3 * 4 + 3], 9);
    for (let k = 0; k < 4; k++) {
      assert.ok(Number.isNaN(values[1 * 4 + k]!), `row 1 col ${k}`);
      assert.ok(Number.isNaN(values[k * 4 + 1]!), `row ${k} col 1`);
    }
    assert.equal(
      editedLine(['very'], ['quick']),
      'Edited: 1 token new in this text (“very”, grey: no previous value); 1 removed from the previous one (“quick”).',
    );
    assert.equal(editedLine([], []), undefined);
    assert.match(editedLine(['a', 'b', 'c', 'd', 'e', 'f', 'g'], [])!, /^Edited: 7 tokens new in this text \(“a”, .*“f”, …/);
  });
});
