// The pure parts of the Intervention and Head ranking tabs on task heads: the run messages' validation (label,
// decision), a classifier's labels before → after, tokens whose label changed, the answer span, the label picker,
// the "Why this label?" heads and the keys a row reads, and the ranking's CSV with its target.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  firstWordPosition,
  parseRunMessage,
  rankingCsv,
  ranksByLabel,
  type DecisionView,
  type RankingView,
} from '../../src/shared/interventions';
import { barWidth, fmtDelta, labelChanges, spanChange, tokenChanges } from '../../webview/lens/views/task-scores-model';
import {
  cellText,
  decisionRow,
  gridDigits,
  dropOf,
  effectText,
  labelOptions,
  readsText,
  targetText,
  topKeys,
  whyCells,
} from '../../webview/lens/views/why-label-model';
import { at } from './helpers';

type Labels = Extract<DecisionView, { kind: 'labels' }>;
const labels = (a: number, b: number, predicted: number | null = a >= b ? 0 : 1): Labels => ({
  kind: 'labels',
  scoreFunction: 'softmax',
  labels: [
    { id: 0, label: 'not_next', logit: a, score: Math.exp(a) / (Math.exp(a) + Math.exp(b)) },
    { id: 1, label: 'next', logit: b, score: Math.exp(b) / (Math.exp(a) + Math.exp(b)) },
  ],
  predicted,
});

describe('run messages with a target', () => {
  const base = { type: 'sweep', id: 1, resultId: 2, terms: ['c2p'], mode: 'zero', position: null };
  it('a label id passes; absent stays absent; a negative, fractional or named label is dropped', () => {
    assert.deepEqual(parseRunMessage({ ...base, label: 1 }), { ...base, label: 1 });
    assert.deepEqual(parseRunMessage(base), base);
    assert.equal(parseRunMessage({ ...base, label: -1 }), undefined);
    assert.equal(parseRunMessage({ ...base, label: 0.5 }), undefined);
    assert.equal(parseRunMessage({ ...base, label: 'next' }), undefined);
  });
  it('decision: id and result id, nothing else', () => {
    assert.deepEqual(parseRunMessage({ type: 'decision', id: 3, resultId: 4, extra: 1 }), { type: 'decision', id: 3, resultId: 4 });
    assert.equal(parseRunMessage({ type: 'decision', id: 3 }), undefined);
  });
  it('a label is picked only on classifiers; token classification starts at the first word', () => {
    assert.ok(ranksByLabel('sequence-classification') && ranksByLabel('token-classification'));
    assert.ok(!ranksByLabel('question-answering') && !ranksByLabel('masked-lm') && !ranksByLabel(null));
    assert.equal(firstWordPosition([{ special: true }, { special: false }, { special: true }]), 1);
    assert.equal(firstWordPosition([{ special: true }]), 0);
  });
});

describe('a classifier before → after', () => {
  it('the decision kept: every label, the predicted marked, scores compared', () => {
    const c = labelChanges(labels(2, 0), labels(1, 0));
    assert.equal(c.rows.length, 2);
    assert.ok(at(c.rows, 0).predictedBefore && at(c.rows, 0).predictedAfter && !at(c.rows, 1).predictedAfter);
    assert.ok(!c.flipped);
    assert.match(c.summary, /^Decision unchanged: not_next \(88\.1% → 73\.1%\)$/);
    assert.ok(at(c.rows, 0).changed, 'a 15-point move is a change');
  });
  it('the decision flipped: said, both rows highlighted', () => {
    const c = labelChanges(labels(1, 0), labels(0, 1));
    assert.ok(c.flipped);
    assert.equal(c.summary, 'Decision changed: not_next (73.1%) → next (73.1%)');
    assert.ok(c.rows.every((r) => r.changed));
  });
  it('below a point nothing is highlighted; regression is said as a value', () => {
    const c = labelChanges(labels(1, 0), labels(1.001, 0));
    assert.ok(c.rows.every((r) => !r.changed));
    const reg: Labels = {
      kind: 'labels',
      scoreFunction: 'none',
      labels: [{ id: 0, label: 'LABEL_0', logit: 0.5, score: 0.5 }],
      predicted: null,
    };
    assert.equal(
      labelChanges(reg, { ...reg, labels: [{ id: 0, label: 'LABEL_0', logit: -0.25, score: -0.25 }] }).summary,
      'Regression output: 0.500 → −0.250',
    );
    assert.equal(barWidth(0.5, 'none'), 0);
    assert.equal(barWidth(0.25, 'softmax'), 25);
    assert.equal(fmtDelta(0.1, 1), '+0.1');
    assert.equal(fmtDelta(-0.1, 1), '−0.1');
  });
});

describe('token labels and answer spans before → after', () => {
  const tok = (position: number, token: string, predicted: number) => ({
    position,
    token,
    predicted,
    labels: [
      { id: 0, label: 'O', logit: 0, score: predicted === 0 ? 0.9 : 0.1 },
      { id: 1, label: 'B-PER', logit: 0, score: predicted === 1 ? 0.9 : 0.1 },
    ],
  });
  it('the positions whose label changed, listed', () => {
    const before: DecisionView = {
      kind: 'tokens',
      labelNames: ['O', 'B-PER'],
      tokens: [tok(0, '[CLS]', 0), tok(1, '▁alice', 1), tok(2, '▁went', 0)],
    };
    const after: DecisionView = {
      kind: 'tokens',
      labelNames: ['O', 'B-PER'],
      tokens: [tok(0, '[CLS]', 0), tok(1, '▁alice', 0), tok(2, '▁went', 0)],
    };
    const c = tokenChanges(before, after);
    assert.deepEqual(c.changed, [1]);
    assert.equal(c.summary, '1 of 3 tokens changed their label: 1 alice B-PER → O');
    assert.equal(tokenChanges(before, before).summary, 'No token changed its label (3 tokens).');
  });
  it('the answer span: same or changed, with its score', () => {
    const span = (s: number, e: number, text: string, score: number): DecisionView & { kind: 'span' } => ({
      kind: 'span',
      answer: { text, startToken: s, endToken: e, score },
    });
    assert.equal(
      spanChange(span(5, 6, 'the cat', 3), span(5, 6, 'the cat', 2.5)),
      'Answer unchanged: “the cat” (tokens 5–6, score 3.000) → “the cat” (tokens 5–6, score 2.500)',
    );
    assert.match(spanChange(span(5, 6, 'the cat', 3), { kind: 'span', answer: null }), /^Answer changed: .* → no answer$/);
  });
});

const ranking = (cells: [number, number, 'c2p' | 'p2c', number][], target: RankingView['target']): RankingView => ({
  terms: ['c2p', 'p2c'],
  mode: 'zero',
  layers: 2,
  heads: 2,
  position: 0,
  token: '[CLS]',
  task: 'sequence-classification',
  target,
  grid: {},
  ranking: cells.map(([layer, head, term, drop]) => ({ layer, head, term, drop, logitAfter: 1 - drop, scoreAfter: 0.5 })),
  ms: 10,
});

describe('Why this label?', () => {
  const target = { kind: 'label' as const, id: 1, label: 'next', logit: 1, score: 0.73 };
  it('the heads that move the logit most either way, largest |drop| first, zero moves left out', () => {
    const r = ranking(
      [
        [0, 0, 'c2p', 0.5],
        [1, 1, 'p2c', 0.2],
        [0, 1, 'c2p', 0],
        [1, 0, 'p2c', -0.7],
      ],
      target,
    );
    const w = whyCells(r, 5);
    assert.deepEqual(
      w.map((c) => [c.layer, c.head, c.effect]),
      [
        [1, 0, 'opposes'],
        [0, 0, 'supports'],
        [1, 1, 'supports'],
      ],
    );
    assert.equal(effectText(at(w, 0)), 'removing it raises the logit by 0.700');
    assert.equal(effectText(at(w, 1)), 'removing it lowers the logit by 0.500');
    assert.equal(whyCells(r, 1).length, 1);
  });
  it('the row pinned: [CLS] for a sequence classifier, the token for token classification, the span start for QA', () => {
    assert.equal(decisionRow(ranking([], target)), 0);
    assert.equal(decisionRow(ranking([], { ...target, position: 4, token: '▁paris' })), 4);
    assert.equal(decisionRow(ranking([], { kind: 'span', startToken: 7, endToken: 9, text: 'the mat', logit: 3 })), 7);
  });
  it('what the row reads: its top keys', () => {
    const keys = topKeys([0.1, 0.5, 0.05, 0.35], [{ text: '[CLS]' }, { text: '▁door' }, { text: '▁the' }, { text: '[SEP]' }], 3);
    assert.deepEqual(
      keys.map((k) => k.i),
      [1, 3, 0],
    );
    assert.equal(readsText(keys), 'reads 1 “door” 50.0%, 3 “[SEP]” 35.0%, 0 “[CLS]” 10.0%');
  });
  it('the target and its cells in words', () => {
    const r = ranking([[0, 0, 'c2p', 0.5]], target);
    assert.equal(targetText(r), 'label “next” (logit 1.000, score 73.0%)');
    assert.equal(dropOf(r), 'the logit of “next”');
    assert.equal(cellText(at(r.ranking, 0), r), ' drop 0.500 (logit after 0.500, score after 50.0%)');
    assert.equal(
      targetText(ranking([], { ...target, position: 4, token: '▁paris' })),
      'label “next” at 4 “paris” (logit 1.000, score 73.0%)',
    );
  });
  it('the label picker: the predicted label first (the default), then every label by name', () => {
    const opts = labelOptions({ task: 'sequence-classification', decision: labels(0, 1) }, null);
    assert.deepEqual(opts, [
      { value: '', text: 'the predicted label (next)' },
      { value: '0', text: 'not_next (26.9%)' },
      { value: '1', text: 'next (73.1%, predicted)' },
    ]);
  });
  it('grid decimals: two, up to four when every drop is small', () => {
    assert.equal(gridDigits(0.41), 2);
    assert.equal(gridDigits(3.2), 2);
    assert.equal(gridDigits(0.072), 3);
    assert.equal(gridDigits(0.0072), 4);
    assert.equal(gridDigits(1e-9), 4);
    assert.equal(gridDigits(0), 2);
  });
  it('CSV: the target on every row', () => {
    const csv = rankingCsv(ranking([[0, 0, 'c2p', 0.5]], { ...target, position: 4, token: '▁paris' }));
    assert.equal(
      csv,
      'rank,layer,head,term,drop,logit_after,score_after,target,target_id,target_position\n1,0,0,c2p,0.5,0.5,0.5,"next",1,4\n',
    );
  });
});
