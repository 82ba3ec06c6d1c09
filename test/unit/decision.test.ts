// A fine-tuned checkpoint's decision on its way to the panel and the editor: a pair typed as "A [SEP] B" in one
// selection (splitAtSep), the pair's offsets into the selection (pairOffset), the decision the panel's predictions
// carry (against Hugging Face's numbers for the bundled pair classifier), and the pure parts the card, the strip and
// the editor draw from (entity spans, colours, the card's rows).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openModel } from '../../src/engine/model/open-model';
import { splitAtSep } from '../../src/extension/common/text-range';
import { compareSide } from '../../src/extension/compare/requests';
import { writeExport } from '../../src/extension/lens/export-files';
import { PanelOcclusion } from '../../src/extension/lens/panel-occlusion';
import { PanelPredictions } from '../../src/extension/lens/panel-predictions';
import { attributionLine, type OcclusionMessage, parseOcclusionMessage, signedStrengths } from '../../src/shared/occlusion';
import { type Decision, decisionLine, entityColour, entityNames, entityOf, entitySpans, tokenScoresLine } from '../../src/shared/decision';
import type { PredictionsToWebview } from '../../src/shared/predictions';
import { cardHeading, classificationRows, entityLegend } from '../../webview/lens/components/decision-model';
import { at, FIXTURES, REPO_ROOT } from './helpers';
import { groupWords } from '../../src/analysis/words';
import { offsetText } from '../../src/extension/common/result-shape';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-decision-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
const open = (dir: string) => openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 2 });

describe('a sentence pair typed in one selection', () => {
  it('splits at [SEP], trims the spaces around it and gives the second text’s offset', () => {
    const text = 'The cat sat.  [SEP]   It was tired.\n';
    const s = splitAtSep(text);
    assert.deepEqual(s, { text: 'The cat sat.', pair: 'It was tired.', pairOffset: 22 });
    assert.equal(text.slice(s.pairOffset, s.pairOffset + s.pair.length), s.pair);
  });
  it('leaves a text without [SEP] alone and refuses two [SEP]s or an empty side', () => {
    assert.deepEqual(splitAtSep('no separator here'), { text: 'no separator here' });
    assert.throws(() => splitAtSep('a [SEP] b [SEP] c'), /more than one \[SEP\]/);
    assert.throws(() => splitAtSep('   [SEP] b'), /both sides of \[SEP\]/);
    assert.throws(() => splitAtSep('a [SEP]  \n'), /both sides of \[SEP\]/);
  });
});

describe('pairOffset: the pair’s tokens count from where it sits in the shown text', () => {
  it('moves only the second text’s offsets; a QA answer keeps its text and moves its offsets', async () => {
    const exp = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'task-heads', 'v3_qa', 'expected_outputs.json'), 'utf8')) as {
      cases: { text: string; text_pair: string; form: string }[];
    };
    const c = exp.cases.find((x) => x.form === 'pair')!;
    const model = await open(path.join(FIXTURES, 'task-heads', 'v3_qa'));
    try {
      const shown = `${c.text} [SEP] ${c.text_pair}`;
      const { text, pair, pairOffset } = splitAtSep(shown);
      const plain = await model.predict({ text, pair });
      const moved = await model.predict({ text, pair, pairOffset });
      assert.deepEqual(moved.input_ids, plain.input_ids);
      const cut = plain.tokens.findIndex((t) => t.special && t.start > 0);
      moved.tokens.forEach((t, k) => {
        const p = plain.tokens[k]!;
        const shift = k > cut ? pairOffset! : 0;
        assert.deepEqual([t.start, t.end], [p.start + shift, p.end + shift], `token ${k}`);
        if (!t.special) assert.equal(shown.slice(t.start, t.end), (k > cut ? pair! : text).slice(p.start, p.end), `token ${k} text`);
      });
      const a = plain.question_answering!.answer!,
        b = moved.question_answering!.answer!;
      assert.equal(b.text, a.text);
      assert.equal(b.start, a.start! + pairOffset!);
      assert.equal(shown.slice(b.start, b.end!), a.text);
      await assert.rejects(model.predict({ text, pair, pairOffset: 2 }), /pairOffset 2/);
    } finally {
      await model.dispose();
    }
  });
});

describe('the panel’s predictions carry the task head’s decision', () => {
  it('the bundled pair classifier: every label, scores as Hugging Face computes them, and the editor is told', async () => {
    const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'default-pairs', 'hf_reference.json'), 'utf8')) as {
      models: {
        model: string;
        cases: { text: string; text_pair: string; expected: { logits: number[]; scores: number[]; label: string } }[];
      }[];
    };
    const m = ref.models.find((x) => x.model === 'models/default-pairs')!;
    const c = m.cases[0]!;
    const model = await open(path.join(REPO_ROOT, 'models', 'default-pairs'));
    try {
      const input = splitAtSep(`${c.text} [SEP] ${c.text_pair}`);
      const result = await model.explain(input);
      const posted: PredictionsToWebview[] = [];
      const told: (Decision | undefined)[] = [];
      const p = new PanelPredictions({
        post: (x) => posted.push(x),
        topK: () => 5,
        log: () => undefined,
        decided: (_id, d) => told.push(d),
      });
      const fm = await p.start(model, result, 7);
      assert.equal(fm.state, 'ready');
      const d = fm.state === 'ready' ? fm.decision : undefined;
      assert.ok(d && d.task === 'sequence-classification', 'a sequence-classification decision');
      assert.equal(d.scoreFunction, 'softmax');
      d.labels.forEach((l, k) => {
        assert.ok(Math.abs(l.logit - c.expected.logits[k]!) <= 1e-4 + 1e-4 * Math.abs(c.expected.logits[k]!), `logit ${k}`);
        assert.ok(Math.abs(l.score - c.expected.scores[k]!) <= 1e-4, `score ${k}`);
      });
      assert.equal(d.labels.find((l) => l.id === d.predicted)?.label, c.expected.label);
      assert.deepEqual(told, [d]);
      assert.equal(posted.at(-1)?.type, 'fillMask');
      assert.match(decisionLine(d), new RegExp(`^${c.expected.label} \\d`));
      // The JSON export carries the decision beside the matrices.
      const file = path.join(cacheDir, 'pair.json');
      await writeExport(result, 'json', file, {}, {}, { decision: d });
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as { decision: Decision; text_pair: string; layers: unknown[] };
      assert.deepEqual(written.decision, JSON.parse(JSON.stringify(d)));
      assert.equal(written.text_pair, input.pair);
      assert.equal(written.layers.length, result.layers.length);
      // Compare shows the same decision on its side of the panel.
      assert.deepEqual(compareSide({ result, ms: 1, decision: d }).decision, d);
      assert.equal(compareSide({ result, ms: 1 }).decision, undefined);
    } finally {
      await model.dispose();
    }
  });

  it('a token classifier: one row per position, names in id order', async () => {
    const model = await open(path.join(FIXTURES, 'task-heads', 'v3_tokcls'));
    try {
      const result = await model.explain({ text: 'the cat sat on the mat' });
      const p = new PanelPredictions({ post: () => undefined, topK: () => 5, log: () => undefined });
      const fm = await p.start(model, result, 1);
      const d = fm.state === 'ready' ? fm.decision : undefined;
      assert.ok(d && d.task === 'token-classification');
      assert.equal(d.tokens.length, result.n);
      const direct = await model.predict({ text: 'the cat sat on the mat' });
      assert.deepEqual(
        d.tokens.map((t) => t.predicted),
        direct.token_classification!.map((t) => t.predicted.id),
      );
      assert.deepEqual(
        d.names,
        direct.token_classification![0]!.labels.map((l) => l.label),
      );
    } finally {
      await model.dispose();
    }
  });
});

describe('entity spans, colours and the card’s rows', () => {
  const names = ['O', 'B-PER', 'I-PER', 'B-LOC', 'I-LOC'];
  const tok = (position: number, predicted: number) => ({
    position,
    predicted,
    scores: names.map((_, k) => (k === predicted ? 0.8 : 0.05)),
  });
  const d: Extract<Decision, { task: 'token-classification' }> = {
    task: 'token-classification',
    names,
    // [CLS] Ada Love lace in Paris B-PER B-PER [SEP]
    tokens: [tok(0, 1), tok(1, 1), tok(2, 2), tok(3, 2), tok(4, 0), tok(5, 3), tok(6, 1), tok(7, 1), tok(8, 2)],
  };
  it('joins B- then I- into one span, starts another at a B-, skips O and the specials', () => {
    const spans = entitySpans(d, (p) => p === 0 || p === 8);
    assert.deepEqual(
      spans.map((s) => [s.first, s.last, s.entity]),
      [
        [1, 3, 'PER'],
        [5, 5, 'LOC'],
        [6, 6, 'PER'],
        [7, 7, 'PER'],
      ],
    );
    assert.ok(Math.abs(spans[0]!.score - 0.8) < 1e-12);
  });
  it('names entities once, gives each one colour, and writes a token’s scores best first', () => {
    assert.deepEqual(entityNames(names), ['PER', 'LOC']);
    assert.equal(entityOf('I-LOC'), 'LOC');
    assert.equal(entityOf('MISC'), 'MISC');
    assert.notEqual(entityColour('PER', names), entityColour('LOC', names));
    assert.match(tokenScoresLine(d, 5, 2), /^B-LOC 80\.0%, \S+ 5\.0%$/);
    assert.equal(
      decisionLine(d, (p) => p === 0 || p === 8),
      '3 × PER, 1 × LOC',
    );
    assert.deepEqual(
      entityLegend(d, (p) => p === 0 || p === 8).map((e) => [e.entity, e.count]),
      [
        ['PER', 5],
        ['LOC', 1],
      ],
    );
  });
  it('a classifier’s rows mark the predicted label; a regression value has no bar', () => {
    const cls: Decision = {
      task: 'sequence-classification',
      problemType: 'single_label_classification',
      scoreFunction: 'softmax',
      labels: [
        { id: 0, label: 'next', logit: 1.2, score: 0.7 },
        { id: 1, label: 'not_next', logit: 0.35, score: 0.3 },
      ],
      predicted: 0,
    };
    const rows = classificationRows(cls);
    assert.deepEqual(
      rows.map((r) => [r.name, r.text, r.predicted, r.bar]),
      [
        ['next', '70.0%', true, 0.7],
        ['not_next', '30.0%', false, 0.3],
      ],
    );
    assert.equal(cardHeading(cls), 'Sequence classification · softmax over 2 labels');
    const reg: Decision = {
      ...cls,
      problemType: 'regression',
      scoreFunction: 'none',
      labels: [{ id: 0, label: 'LABEL_0', logit: 0.41723, score: 0.41723 }],
      predicted: null,
    };
    assert.deepEqual(
      classificationRows(reg).map((r) => [r.text, r.bar]),
      [['0.4172', null]],
    );
    assert.equal(decisionLine(reg), 'LABEL_0 0.4172');
  });
});

describe('which words made it say that: occlusion in the panel', () => {
  it('posts progress then every token’s score as the engine computes it, for the label asked; Cancel stops it', async () => {
    const model = await open(path.join(REPO_ROOT, 'models', 'default-pairs'));
    try {
      const input = splitAtSep('A company of pioneers had arrived during the day. [SEP] Canolles ordered works to begin.');
      const result = await model.explain(input);
      const posted: OcclusionMessage[] = [];
      const shown: ((number | null)[] | undefined)[] = [];
      const occ = new PanelOcclusion({ post: (m) => posted.push(m), log: () => undefined, shown: (_id, s) => shown.push(s) });
      const a = await occ.start(model, result, 3, { label: 1 });
      assert.equal(a.state, 'ready');
      assert.ok(a.state === 'ready' && a.mask && a.remove);
      assert.equal(posted[0]?.attribution.state, 'running');
      assert.ok(posted.every((m) => m.resultId === 3));
      const direct = await model.occlude({ text: input.text, pair: input.pair, target: { label: 1 } });
      assert.equal(a.followed, `“${direct.target.kind === 'label' ? direct.target.label : ''}” logit`);
      assert.deepEqual(a.mask.length, result.n);
      a.mask.forEach((x, i) => {
        const want = direct.methods.mask!.scores[i]!;
        if (want === null) assert.equal(x, null, `#${i}`);
        else assert.ok(x !== null && Math.abs(x - want) < 1e-4, `#${i}: ${x} vs ${want}`);
      });
      assert.equal(a.mask[0], null, '[CLS] is not taken out');
      assert.deepEqual(shown, [a.mask]);
      assert.equal(occ.of(3), a);
      // Cancelled at once: one line, and nothing handed to the editor.
      const run = occ.start(model, result, 4, { label: 0 });
      occ.cancel();
      const c = await run;
      assert.deepEqual(c, { state: 'error', message: 'cancelled' });
      assert.equal(shown.length, 1);
      // With the strip's merge: each word (the groups the merge shows) taken out whole.
      const text = 'Unbelievably, the pioneers arrived. [SEP] Canolles ordered works.';
      const pairResult = await model.explain(splitAtSep(text));
      const w = await occ.start(model, pairResult, 5, { label: 1 }, 'words');
      assert.ok(w.state === 'ready' && w.words && w.mask, 'a word attribution');
      const words = groupWords(pairResult.tokens, offsetText(pairResult), 'words').filter((g) => !g.special);
      assert.deepEqual(
        w.words.groups,
        words.map((g) => g.pieces),
      );
      assert.equal(w.words.merge, 'words');
      assert.ok(
        words.some((g) => g.pieces.length > 1),
        'some word has several pieces',
      );
      for (const g of words) for (const p of g.pieces) assert.equal(w.mask[p], w.mask[g.pieces[0]!], `“${g.text}”: one score a word`);
      const perWord = await model.occlude({ ...splitAtSep(text), target: { label: 1 }, groups: w.words.groups, methods: ['mask'] });
      w.mask.forEach((x, i) => {
        const want = perWord.methods.mask!.scores[i]!;
        assert.ok(x === want || (x !== null && want !== null && Math.abs(x - want) < 1e-5), `#${i}: ${x} vs ${want}`);
      });
      assert.equal(at(shown, shown.length - 1), w.mask);
    } finally {
      await model.dispose();
    }
  });

  it('validates what the view asks and colours by signed strength', () => {
    assert.deepEqual(parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { label: 1, position: 4 } }), {
      type: 'occlude',
      resultId: 2,
      target: { label: 1, position: 4 },
    });
    assert.deepEqual(parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { span: true } })?.type, 'occlude');
    assert.equal(parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { label: -1 } }), undefined);
    assert.equal(parseOcclusionMessage({ type: 'occlude', resultId: 'x', target: { label: 1 } }), undefined);
    assert.deepEqual(signedStrengths([null, 2, -1, 0.05, -4]), [0, 0.5, -0.25, 0, -1]);
    assert.equal(
      attributionLine([null, 2, -1, 0.5], (i) => `t${i}`),
      'for: t1 +2.000, t3 +0.500 · against: t2 −1.000',
    );
    assert.equal(attributionLine([null, null], String), 'no token moves it');
    // Words: each named once, by its first piece.
    assert.equal(
      attributionLine([null, 2, 2, -1, 0.5], (i) => `w${i}`, 3, [[1, 2], [3], [4]]),
      'for: w1 +2.000, w4 +0.500 · against: w3 −1.000',
    );
    assert.equal(parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { label: 1 }, merge: 'identifiers' })?.type, 'occlude');
    assert.equal(
      (parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { label: 1 }, merge: 'words' }) as { merge?: string }).merge,
      'words',
    );
    assert.equal(parseOcclusionMessage({ type: 'occlude', resultId: 2, target: { label: 1 }, merge: 'letters' }), undefined);
  });
});
