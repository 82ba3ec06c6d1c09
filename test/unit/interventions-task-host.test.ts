// The host path of the Intervention and Head ranking tabs on task-head checkpoints (issue 23): what the checkpoint
// decides, an intervention's labels before and after, a ranking aimed at a label (or the QA answer span), the export
// carrying the target, and every rerun on the explained sentence pair. Real engine on models/default-pairs and the
// tiny task-head fixtures; the numbers must be the engine's own for the same input (HF parity: sweep-target.test.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { ExplainResult } from '../../src/engine';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { spanText } from '../../src/extension/lens/decision-views';
import { RunHost, type RunPanel } from '../../src/extension/lens/interventions';
import { rankingCsv, type RunLabel, type RunToWebview } from '../../src/shared/interventions';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const A = 'The kettle began to whistle.';
const B = 'She poured the water into the teapot.';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-task-runs-'));
const models: OpenModel[] = [];
after(async () => {
  for (const m of models) await m.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});
const open = async (dir: string) => {
  const m = await openModel(dir, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 2 });
  models.push(m);
  return m;
};
const PAIRS = path.join(REPO_ROOT, 'models', 'default-pairs');
const fixture = (name: string) => path.join(FIXTURES, 'task-heads', name);

/** A panel stand-in showing `model`'s explain of text (+ pair, typed after a [SEP] as the editor gives it: the
 *  shown text holds both, the pair's offset says where the second starts), recording what the host posts and shows. */
async function panelOn(model: OpenModel, text: string, pair?: string) {
  const plain = await model.explain({ text, pair, ...(pair === undefined ? {} : { pairOffset: `${text} [SEP] `.length }) });
  const posted: RunToWebview[] = [];
  const shown: { result: ExplainResult; run?: RunLabel; previous: ExplainResult }[] = [];
  const current = { id: 3, text: pair === undefined ? text : `${text} [SEP] ${pair}`, result: plain, model };
  const panel: RunPanel = {
    current: () => current,
    plain: () => plain,
    show: (result, run, previous) => shown.push({ result, run, previous }),
    post: (m) => posted.push(m),
    save: async (_format, content, target) => {
      fs.writeFileSync(target!, content);
      return target;
    },
    log: () => undefined,
  };
  const host = new RunHost(panel);
  /** Runs one message and returns the host's answer to it. */
  const ask = async (m: Parameters<RunHost['handle']>[0]) => {
    await host.handle(m);
    const last = at(posted, posted.length - 1);
    assert.ok(last.type === 'runResult', JSON.stringify(last));
    return last;
  };
  return { host, posted, shown, plain, ask };
}

describe('an answer span’s text', () => {
  const tok = (text: string, start: number, end: number, special = false) => ({ id: 0, text, start, end, special });
  const tokens = [tok('[CLS]', 0, 0, true), tok('▁the', 0, 3), tok('▁m', 3, 5), tok('at', 5, 7), tok('[SEP]', 7, 7, true)];
  it('cut from the input by the tokens’ offsets; without the input, the pieces joined without their markers', () => {
    assert.equal(spanText(tokens, 1, 3, 'the mat'), 'the mat');
    assert.equal(spanText(tokens, 1, 3), 'the mat');
    assert.equal(spanText([tok('[CLS]', 0, 0, true), tok('pa', 0, 2), tok('##ris', 2, 5)], 1, 2), 'paris');
  });
});

describe('RunHost on the pair classifier (models/default-pairs)', () => {
  it('decision: the sequence classifier, its two labels and predicted label on the pair, as model.predict gives them', async () => {
    const model = await open(PAIRS);
    const { ask } = await panelOn(model, A, B);
    const m = await ask({ type: 'decision', id: 1, resultId: 3 });
    assert.ok(m.ok && m.decision, JSON.stringify(m));
    const want = (await model.predict({ text: A, pair: B })).classification!;
    assert.equal(m.decision.task, 'sequence-classification');
    assert.equal(m.decision.unrankable, undefined);
    assert.equal(m.decision.unpatchable, undefined);
    const d = m.decision.decision;
    assert.ok(d?.kind === 'labels');
    assert.deepEqual(
      d.labels.map((l) => l.label),
      ['not_next', 'next'],
    );
    assert.deepEqual(
      d.labels.map((l) => l.logit),
      want.labels.map((l) => l.logit),
    );
    assert.equal(d.predicted, want.predicted!.id);
    // The pair matters: the first text alone is another input with other logits.
    const alone = (await model.predict({ text: A })).classification!;
    assert.notEqual(at(d.labels, 0).logit, at(alone.labels, 0).logit);
  });

  it('intervene: every label before and after, the same as model.ablate on the pair', async () => {
    const model = await open(PAIRS);
    const { ask } = await panelOn(model, A, B);
    const m = await ask({ type: 'intervene', id: 2, resultId: 3, entries: '0.*:all,1.*:all', mode: 'zero', position: null, top: 5 });
    assert.ok(m.ok && m.intervention, JSON.stringify(m));
    const iv = m.intervention;
    const want = await model.ablate({ text: A, pair: B, ablate: '0.*:all,1.*:all' });
    assert.equal(iv.task, 'sequence-classification');
    assert.deepEqual(iv.rows, []);
    assert.ok(iv.taskBefore?.kind === 'labels' && iv.taskAfter?.kind === 'labels');
    assert.deepEqual(
      iv.taskBefore.labels.map((l) => [l.label, l.logit, l.score]),
      want.task_before!.classification!.labels.map((l) => [l.label, l.logit, l.score]),
    );
    assert.deepEqual(
      iv.taskAfter.labels.map((l) => [l.label, l.logit, l.score]),
      want.task_after!.classification!.labels.map((l) => [l.label, l.logit, l.score]),
    );
    assert.notEqual(at(iv.taskAfter.labels, 1).logit, at(iv.taskBefore.labels, 1).logit, 'removing two layers moves the logits');
  });

  it('sweep aimed at a label by id: the engine’s ranking for that label on the pair; export carries the target', async () => {
    const model = await open(PAIRS);
    const { ask, host, posted } = await panelOn(model, A, B);
    const m = await ask({ type: 'sweep', id: 4, resultId: 3, terms: ['c2p', 'p2c'], mode: 'zero', position: null, label: 0 });
    assert.ok(m.ok && m.ranking, JSON.stringify(m));
    const r = m.ranking;
    assert.equal(posted.filter((x) => x.type === 'runProgress').length, 4 * 8 * 2 + 1);
    const want = await model.sweep({ text: A, pair: B, terms: ['c2p', 'p2c'], target: { label: 0 } });
    assert.equal(r.task, 'sequence-classification');
    assert.equal(r.followed, undefined);
    assert.ok(r.target?.kind === 'label');
    assert.equal(r.target.label, 'not_next');
    assert.equal(r.target.id, 0);
    assert.equal(r.target.position, undefined, 'a sequence classifier reads its [CLS] row');
    assert.equal(r.target.logit, want.target!.logit_before);
    assert.deepEqual(
      r.ranking.map((c) => [c.layer, c.head, c.term, c.drop, c.logitAfter, c.scoreAfter]),
      want.ranking.map((c) => [c.layer, c.head, c.term, c.drop, c.logit_after, c.score_after]),
    );
    assert.deepEqual(r.grid, want.grid);
    const csv = path.join(tmp, 'pairs.csv');
    const json = path.join(tmp, 'pairs.json');
    await host.exportRanking('csv', csv);
    const lines = fs.readFileSync(csv, 'utf8').trim().split('\n');
    assert.equal(at(lines, 0), 'rank,layer,head,term,drop,logit_after,score_after,target,target_id,target_position');
    assert.equal(lines.length, 1 + 64);
    assert.match(at(lines, 1), /,"not_next",0,$/);
    assert.equal(fs.readFileSync(csv, 'utf8'), rankingCsv(r));
    await host.exportRanking('json', json);
    assert.deepEqual(JSON.parse(fs.readFileSync(json, 'utf8')).target, r.target);
  });

  it('sweep without a label follows the predicted label', async () => {
    const model = await open(PAIRS);
    const { ask } = await panelOn(model, A, B);
    const d = await ask({ type: 'decision', id: 5, resultId: 3 });
    assert.ok(d.ok && d.decision?.decision?.kind === 'labels');
    const m = await ask({ type: 'sweep', id: 6, resultId: 3, terms: ['c2c'], mode: 'zero', position: null });
    assert.ok(m.ok && m.ranking?.target?.kind === 'label', JSON.stringify(m));
    assert.equal(m.ranking.target.id, d.decision.decision.predicted);
  });

  it('showRun: the intervened run keeps the pair (same tokens and token types as the plain explain)', async () => {
    const model = await open(PAIRS);
    const { host, shown, plain } = await panelOn(model, A, B);
    await host.handle({ type: 'showRun', resultId: 3, run: 'ablated', entries: '1.1:c2p', mode: 'zero' });
    const ablated = at(shown, 0).result;
    assert.equal(ablated.pair, B);
    assert.equal(ablated.pairOffset, plain.pairOffset);
    assert.deepEqual(ablated.tokens, plain.tokens, 'the same offsets into the shown text');
    assert.deepEqual(ablated.inputIds, plain.inputIds);
    assert.deepEqual(ablated.tokenTypeIds, plain.tokenTypeIds);
    await Promise.all([ablated.load(0), plain.load(0)]);
    assert.deepEqual(
      ablated.slice(0, 0, 'probs'),
      plain.slice(0, 0, 'probs'),
      'layer 0 is not intervened: the pair’s attention as explained',
    );
  });
});

describe('RunHost on the other task heads', () => {
  it('token classification: default position = the first word; a chosen position and label', async () => {
    const model = await open(fixture('v3_tokcls'));
    const { ask } = await panelOn(model, 'alice went to paris.');
    const d = await ask({ type: 'decision', id: 1, resultId: 3 });
    assert.ok(d.ok && d.decision?.decision?.kind === 'tokens');
    assert.equal(d.decision.decision.tokens.length, 19);
    const byDefault = await ask({ type: 'sweep', id: 2, resultId: 3, terms: ['c2c'], mode: 'zero', position: null });
    assert.ok(byDefault.ok && byDefault.ranking?.target?.kind === 'label', JSON.stringify(byDefault));
    assert.equal(byDefault.ranking.target.position, 1);
    assert.equal(byDefault.ranking.target.token, '▁a');
    const chosen = await ask({ type: 'sweep', id: 3, resultId: 3, terms: ['c2c'], mode: 'zero', position: 10, label: 2 });
    assert.ok(chosen.ok && chosen.ranking?.target?.kind === 'label');
    const want = await model.sweep({ text: 'alice went to paris.', terms: ['c2c'], position: 10, target: { label: 2 } });
    assert.equal(chosen.ranking.target.position, 10);
    assert.equal(chosen.ranking.target.id, 2);
    assert.deepEqual(
      chosen.ranking.ranking.map((c) => c.drop),
      want.ranking.map((c) => c.drop),
    );
    const iv = await ask({ type: 'intervene', id: 4, resultId: 3, entries: '0.*:all', mode: 'zero', position: null, top: 5 });
    assert.ok(iv.ok && iv.intervention?.taskAfter?.kind === 'tokens');
    assert.equal(iv.intervention.taskAfter.tokens.length, 19);
  });

  it('question answering: the ranking follows the answer span of the question + context pair', async () => {
    const model = await open(fixture('v3_qa'));
    const q = 'who sat on the mat?',
      ctx = 'the cat sat on the mat and the dog ran.';
    const { ask } = await panelOn(model, q, ctx);
    const d = await ask({ type: 'decision', id: 1, resultId: 3 });
    assert.ok(d.ok && d.decision?.decision?.kind === 'span' && d.decision.decision.answer);
    const m = await ask({ type: 'sweep', id: 2, resultId: 3, terms: ['c2p'], mode: 'zero', position: null, label: 1 });
    assert.ok(m.ok && m.ranking?.target?.kind === 'span', JSON.stringify(m));
    const want = await model.sweep({ text: q, pair: ctx, terms: ['c2p'] });
    assert.ok(want.target?.kind === 'span');
    assert.equal(m.ranking.target.startToken, want.target.start_token);
    assert.equal(m.ranking.target.text, d.decision.decision.answer.text);
    assert.match(rankingCsv(m.ranking), /^rank,layer,head,term,drop,logit_after,score_after,target,target_id,target_position\n1,/);
    // A typed [SEP] instead of a pair: the same span, its text cut from the input by the tokens' offsets.
    const typed = await panelOn(model, `${q} [SEP] ${ctx}`);
    const t = await typed.ask({ type: 'decision', id: 3, resultId: 3 });
    assert.ok(t.ok && t.decision?.decision?.kind === 'span' && t.decision.decision.answer);
    assert.equal(t.decision.decision.answer.startToken, d.decision.decision.answer.startToken);
    assert.equal(t.decision.decision.answer.text?.trim(), d.decision.decision.answer.text?.trim());
  });

  it('no head, or only RTD: one line saying why nothing can be ranked or patched; the sweep refused with it, no rerun', async () => {
    for (const [name, line, patchLine] of [
      ['v2_tiny', /^Nothing to rank or patch here: v2_tiny has no prediction head/, /^Nothing to rank or patch here/],
      ['v3_tiny_rtd', /only a replaced-token-detection head: a head ranking/, /only a replaced-token-detection head: patching follows/],
    ] as const) {
      const model = await open(path.join(FIXTURES, 'deberta', name));
      const { ask, posted } = await panelOn(model, 'the cat sat on the mat');
      const d = await ask({ type: 'decision', id: 1, resultId: 3 });
      assert.ok(d.ok && d.decision, name);
      assert.match(d.decision.unrankable ?? '', line, name);
      assert.ok(!d.decision.unrankable!.includes('\n'), name);
      // The Patching tab's own line: it follows more heads than a ranking does.
      assert.match(d.decision.unpatchable ?? '', patchLine, name);
      const m = await ask({ type: 'sweep', id: 2, resultId: 3, terms: ['c2p'], mode: 'zero', position: 2 });
      assert.ok(!m.ok && m.error === d.decision.unrankable, name);
      assert.equal(posted.filter((x) => x.type === 'runProgress').length, 0, `${name}: nothing reran`);
    }
  });

  it('multiple choice: one line saying nothing can be ranked, and the sweep refused with it', async () => {
    const model = await open(fixture('v3_mc'));
    const { ask } = await panelOn(model, 'the cat sat on the');
    const d = await ask({ type: 'decision', id: 1, resultId: 3 });
    assert.ok(d.ok && d.decision);
    assert.match(d.decision.unrankable ?? '', /multiple-choice/);
    assert.equal(d.decision.unpatchable, undefined, 'the Patching tab follows the choice on screen');
    const m = await ask({ type: 'sweep', id: 2, resultId: 3, terms: ['c2p'], mode: 'zero', position: null });
    assert.ok(!m.ok && !m.error.includes('\n'));
    assert.match(m.error, /multiple-choice/);
  });
});
