// The host path of the Intervention and Head ranking tabs: the view's run messages validated, run on the real
// bundled model through RunHost, answered with progress, cancelled on request, the intervened run shown against the
// plain one, and the ranking written as CSV/JSON. The numbers themselves are checked against HF in ablate.test.ts
// and sweep.test.ts; here they must be the ones the engine gives for the same text.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { ExplainResult } from '../../src/engine';
import { RunHost, type RunPanel } from '../../src/extension/lens/interventions';
import { parseRunMessage, rankingCsv, type RunLabel, type RunToWebview } from '../../src/shared/interventions';
import { parseWebviewMessage } from '../../src/shared/protocol/lens';
import { REPO_ROOT, at } from './helpers';

const TEXT = 'He closed the door behind [MASK] and sat down.';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-runs-'));
let model: OpenModel;
before(async () => {
  model = await openModel(path.join(REPO_ROOT, 'models', 'default'), {
    cacheDir: path.join(tmp, 'cache'),
    executionProvider: 'cpu',
    threads: 2,
  });
});
after(async () => {
  await model?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A panel stand-in that records what the host posts and shows. */
async function fakePanel() {
  const plain = await model.explain({ text: TEXT });
  const posted: RunToWebview[] = [];
  const shown: { result: ExplainResult; run?: RunLabel; previous: ExplainResult }[] = [];
  let current: { id: number; text: string; result: ExplainResult; model?: typeof model; run?: RunLabel } = {
    id: 7,
    text: TEXT,
    result: plain,
    model,
  };
  const panel: RunPanel = {
    current: () => current,
    plain: () => plain,
    show: (result, run, previous) => {
      shown.push({ result, run, previous });
      current = { ...current, id: current.id + 1, result, run };
    },
    post: (m) => posted.push(m),
    save: async (format, content, target) => {
      fs.writeFileSync(target!, content);
      return target;
    },
    log: () => undefined,
  };
  return { panel, posted, shown, plain, host: new RunHost(panel) };
}

describe('run messages from the view', () => {
  it('are validated: known shapes pass, anything else is dropped; they are also WebviewToHost for the type checker', () => {
    assert.deepEqual(parseRunMessage({ type: 'intervene', id: 1, resultId: 2, entries: '1.1:c2p', mode: 'zero', position: null, top: 5 }), {
      type: 'intervene',
      id: 1,
      resultId: 2,
      entries: '1.1:c2p',
      mode: 'zero',
      position: null,
      top: 5,
    });
    assert.equal(
      parseRunMessage({ type: 'intervene', id: 1, resultId: 2, entries: 'rm -rf /', mode: 'zero', position: null, top: 5 }),
      undefined,
    );
    assert.equal(
      parseRunMessage({ type: 'intervene', id: 1, resultId: 2, entries: '1.1:c2p', mode: 'half', position: null, top: 5 }),
      undefined,
    );
    assert.equal(parseRunMessage({ type: 'sweep', id: 1, resultId: 2, terms: ['c2p', 'x2y'], mode: 'zero', position: 3 }), undefined);
    assert.deepEqual(parseRunMessage({ type: 'sweep', id: 1, resultId: 2, terms: ['c2p'], mode: 'mean', position: 3 }), {
      type: 'sweep',
      id: 1,
      resultId: 2,
      terms: ['c2p'],
      mode: 'mean',
      position: 3,
    });
    assert.deepEqual(parseRunMessage({ type: 'cancelRun', id: 4 }), { type: 'cancelRun', id: 4 });
    assert.equal(parseRunMessage({ type: 'exportRanking', format: 'xlsx' }), undefined);
    assert.equal(parseRunMessage({ type: 'request', id: 1 }), undefined);
    assert.equal(parseWebviewMessage({ type: 'cancelRun', id: 4 }), undefined, 'the matrix parser leaves run messages alone');
  });
});

describe('RunHost on the bundled model', () => {
  it('intervene: the same before/after, KL and followed token as model.ablate on the explained text', async () => {
    const { host, posted } = await fakePanel();
    await host.handle({ type: 'intervene', id: 1, resultId: 7, entries: '1.1:c2p', mode: 'zero', position: null, top: 5 });
    const want = await model.ablate({ text: TEXT, ablate: '1.1:c2p', top: 5 });
    assert.equal(posted.length, 1);
    const m = at(posted, 0);
    assert.ok(m.type === 'runResult' && m.ok && m.intervention, JSON.stringify(m));
    const iv = m.intervention;
    assert.deepEqual(iv.entries, ['1.1:c2p']);
    assert.equal(iv.firstLayer, 1);
    assert.equal(iv.rows.length, 1);
    const row = at(iv.rows, 0);
    assert.equal(row.position, 6);
    assert.equal(row.token, '[MASK]');
    assert.deepEqual(
      row.before.map((t) => t.token),
      at(want.before, 0).top.map((t) => t.token),
    );
    assert.deepEqual(
      row.after.map((t) => t.token),
      at(want.after, 0).top.map((t) => t.token),
    );
    assert.equal(at(row.after, 0).token, ',');
    assert.equal(row.kl, at(want.kl, 0).kl);
    const tracked = at(want.tracked, 0);
    assert.deepEqual(row.followed, {
      token: '▁him',
      which: 'top1_before',
      before: { logprob: tracked.before.logprob, rank: 1 },
      after: { logprob: tracked.after.logprob, rank: 2 },
    });
  });

  it('a bad spec or a replaced result: one clear error back, nothing thrown', async () => {
    const { host, posted } = await fakePanel();
    await host.handle({ type: 'intervene', id: 2, resultId: 7, entries: '9.0:c2p', mode: 'zero', position: null, top: 5 });
    await host.handle({ type: 'intervene', id: 3, resultId: 99, entries: '1.1:c2p', mode: 'zero', position: null, top: 5 });
    assert.deepEqual(
      posted.map((m) => m.type === 'runResult' && !m.ok && m.error),
      [
        `--ablate entry "9.0:c2p": layer 9 does not exist; this model has layers 0…3 and the Enhanced Mask Decoder's passes 4 (EMD 1) and 5 (EMD 2)`,
        'this result has been replaced: run it again',
      ],
    );
  });

  it('sweep: progress after every cell, the ranking of the engine, CSV and JSON export of it', async () => {
    const { host, posted } = await fakePanel();
    await host.handle({ type: 'sweep', id: 5, resultId: 7, terms: ['c2p', 'p2c'], mode: 'zero', position: null });
    const progress = posted.filter((m) => m.type === 'runProgress');
    assert.equal(progress.length, 4 * 8 * 2 + 1);
    const last = at(posted, posted.length - 1);
    assert.ok(last.type === 'runResult' && last.ok && last.ranking);
    const want = await model.sweep({ text: TEXT, terms: ['c2p', 'p2c'] });
    assert.deepEqual(
      last.ranking.ranking.map((c) => `${c.layer}.${c.head}:${c.term}`),
      want.ranking.map((c) => `${c.layer}.${c.head}:${c.term}`),
    );
    assert.deepEqual(last.ranking.grid, want.grid);
    assert.equal(last.ranking.followed?.token, '▁him');
    const csv = path.join(tmp, 'r.csv'),
      json = path.join(tmp, 'r.json');
    assert.equal(await host.exportRanking('csv', csv), csv);
    const lines = fs.readFileSync(csv, 'utf8').trim().split('\n');
    assert.equal(lines[0], 'rank,layer,head,term,drop,logprob_after,rank_after,top1_after');
    assert.equal(lines.length, 65);
    assert.match(at(lines, 1), /^1,2,1,c2p,0\.41\d*,-1\.14\d*,2,","$/);
    assert.equal(fs.readFileSync(csv, 'utf8'), rankingCsv(last.ranking));
    await host.exportRanking('json', json);
    assert.deepEqual(JSON.parse(fs.readFileSync(json, 'utf8')).ranking, last.ranking.ranking);
  });

  it('cancelRun stops a sweep in flight: the answer says cancelled', async () => {
    const { host, posted } = await fakePanel();
    const run = host.handle({ type: 'sweep', id: 9, resultId: 7, terms: ['c2p', 'p2c', 'c2c'], mode: 'zero', position: null });
    while (!posted.some((m) => m.type === 'runProgress' && m.done >= 2)) await new Promise((r) => setTimeout(r, 5));
    await host.handle({ type: 'cancelRun', id: 9 });
    await run;
    const last = at(posted, posted.length - 1);
    assert.ok(last.type === 'runResult' && !last.ok && last.cancelled, JSON.stringify(last));
    assert.ok(posted.filter((m) => m.type === 'runProgress').length < 96);
  });

  it('showRun: the intervened run is shown against the plain one (Diff), and back', async () => {
    const { host, shown, plain } = await fakePanel();
    await host.handle({ type: 'showRun', resultId: 7, run: 'ablated', entries: '1.1:c2p', mode: 'zero' });
    assert.equal(shown.length, 1);
    const ablated = at(shown, 0);
    assert.deepEqual(ablated.run, { entries: ['1.1:c2p'], mode: 'zero' });
    assert.equal(ablated.previous, plain);
    await ablated.result.load(1);
    assert.ok(
      ablated.result.slice(1, 1, 'c2p').every((x) => x === 0),
      'head 1 of layer 1 has its c2p removed',
    );
    await host.handle({ type: 'showRun', resultId: 8, run: 'plain', entries: '1.1:c2p', mode: 'zero' });
    assert.equal(shown.length, 2);
    const back = at(shown, 1);
    assert.equal(back.result, plain);
    assert.equal(back.run, undefined);
    assert.equal(back.previous, ablated.result);
  });
});
