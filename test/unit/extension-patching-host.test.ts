// The Patching tab's host half on a real sentence-pair classifier (models/default-pairs): the corrupted fields start
// from the explained pair, a causal trace of a corrupted pair answers with the grid the tab draws, the engine's
// refusal comes back as its one line, and Cancel stops a trace with `cancelled` set. On a multiple-choice head
// (task-heads/v3_mc) a trace follows the score of the choice on screen.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ExplainResult, LensModel } from '../../src/engine';
import { openModel } from '../../src/engine/model/open-model';
import { explainedInput } from '../../src/extension/lens/interventions';
import { PatchHost } from '../../src/extension/lens/patching';
import type { RunToWebview } from '../../src/shared/interventions';
import { FIXTURES, REPO_ROOT } from './helpers';

const TEXT = 'The cat sat on the mat.';
const PAIR = 'It was asleep in the sun.';

describe('Patching host (models/default-pairs)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patchhost-'));
  let model: LensModel;
  let result: ExplainResult;
  const posts: RunToWebview[] = [];
  const saved: { content: string; stem?: string }[] = [];
  const running = new Map<number, AbortController>();
  let host: PatchHost;

  before(async () => {
    model = await openModel(path.join(REPO_ROOT, 'models', 'default-pairs'), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    result = await model.explain({ text: TEXT, pair: PAIR });
    host = new PatchHost(
      {
        current: () => ({ id: 7, text: `${TEXT} [SEP] ${PAIR}`, result, model }),
        plain: () => result,
        post: (m) => posts.push(m),
        save: async (_format, content, _target, stem) => (saved.push({ content, stem }), `/tmp/${stem}.csv`),
        log: () => undefined,
      },
      running,
      explainedInput,
    );
  });
  after(async () => {
    result.release();
    await model.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const last = () => posts[posts.length - 1]!;

  it('starts the corrupted fields from the explained pair', async () => {
    await host.handle({ type: 'patchSetup', id: 1, resultId: 7 });
    assert.deepEqual(last(), { type: 'runResult', id: 1, ok: true, patchSetup: { text: TEXT, pair: PAIR } });
  });

  it('answers a causal trace of a corrupted pair with the grid, the target and both predictions; exports its CSV', async () => {
    await host.handle({
      type: 'patch',
      id: 2,
      resultId: 7,
      trace: 'resid',
      corrupt: TEXT.replace('cat', 'dog'),
      corruptPair: PAIR,
      label: 1,
      position: null,
    });
    const m = last();
    assert.ok(m.type === 'runResult' && m.ok, JSON.stringify(m).slice(0, 300));
    const v = m.patching!;
    assert.equal(v.trace, 'resid');
    assert.match(v.target, /^logit of “/);
    assert.equal(v.unit, 'logit');
    assert.equal(v.differing.length, 1);
    assert.equal(v.tokens[v.differing[0]!], 'cat');
    assert.match(v.predictions.clean, /%/);
    assert.ok(
      posts.some((p) => p.type === 'runProgress' && p.id === 2),
      'progress was reported',
    );
    const g = v.grid;
    assert.ok(g.kind === 'resid');
    assert.equal(g.restored.length, 5);
    // The final state at every position is the clean run's: restored 1 where the target reads ([CLS]).
    assert.ok(Math.abs((g.restored[4]![0] ?? NaN) - 1) < 1e-4, `final state at [CLS]: ${g.restored[4]![0]}`);
    assert.equal(await host.export('resid', 'csv'), '/tmp/causal-trace.csv');
    assert.equal(saved[0]!.content.split('\n')[0], 'layer,position,token,restored,value,target,clean,corrupt');
    await assert.rejects(host.export('heads', 'csv'), /no each head’s term patched alone yet/);
  });

  it('says the engine’s refusal in one line (head terms of a corrupted text of another length)', async () => {
    await host.handle({ type: 'patch', id: 3, resultId: 7, trace: 'heads', corrupt: 'Short.', corruptPair: PAIR, position: null });
    const m = last();
    assert.ok(m.type === 'runResult' && !m.ok && !m.cancelled);
    assert.ok(!m.error.includes('\n') && /must tokenize to the same length/.test(m.error), m.error);
  });

  it('cancels a trace in flight', async () => {
    const run = host.handle({
      type: 'patch',
      id: 4,
      resultId: 7,
      trace: 'heads',
      corrupt: TEXT.replace('cat', 'dog'),
      corruptPair: PAIR,
      position: null,
    });
    running.get(4)?.abort();
    await run;
    const m = last();
    assert.ok(m.type === 'runResult' && m.id === 4 && !m.ok && m.cancelled, JSON.stringify(m).slice(0, 200));
  });

  it('refuses a result that is not the one on screen', async () => {
    await host.handle({ type: 'patch', id: 5, resultId: 8, trace: 'resid', corrupt: 'x', position: null });
    const m = last();
    assert.ok(m.type === 'runResult' && !m.ok && /replaced/.test(m.error));
  });
});

describe('Patching host on a multiple-choice head (task-heads/v3_mc)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-patchhost-mc-'));
  const PROMPT = 'the cat sat on the mat.',
    CHOICE = 'the cat.';
  let model: LensModel;
  let result: ExplainResult;
  const posts: RunToWebview[] = [];
  let host: PatchHost;
  before(async () => {
    model = await openModel(path.join(FIXTURES, 'task-heads', 'v3_mc'), {
      cacheDir: path.join(tmp, 'cache'),
      executionProvider: 'cpu',
      threads: 2,
    });
    result = await model.explain({ text: PROMPT, pair: CHOICE });
    host = new PatchHost(
      {
        current: () => ({ id: 9, text: `${PROMPT} [SEP] ${CHOICE}`, result, model }),
        plain: () => result,
        post: (m) => posts.push(m),
        save: () => Promise.resolve(undefined),
        log: () => undefined,
      },
      new Map(),
      explainedInput,
    );
  });
  after(async () => {
    result.release();
    await model.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('follows the score of the choice on screen; a corrupted choice traces back to the choice’s tokens', async () => {
    await host.handle({ type: 'patch', id: 1, resultId: 9, trace: 'resid', corrupt: PROMPT, corruptPair: 'the mat.', position: null });
    const m = posts[posts.length - 1]!;
    assert.ok(m.type === 'runResult' && m.ok, JSON.stringify(m).slice(0, 300));
    const v = m.patching!;
    assert.equal(v.target, 'score of the choice “the cat.”');
    assert.equal(v.predictions.clean, 'choice “the cat.”');
    assert.equal(v.predictions.corrupt, 'choice “the mat.”');
    const g = v.grid;
    assert.ok(g.kind === 'resid');
    assert.ok(Math.abs((g.restored.at(-1)![0] ?? NaN) - 1) < 1e-4, 'the final state restores the clean score');
    // Layer 0, at the one token the texts differ in: the whole difference comes back.
    assert.equal(v.differing.length, 1);
    assert.ok(Math.abs((g.restored[0]![v.differing[0]!] ?? NaN) - 1) < 1e-4);
  });
});
