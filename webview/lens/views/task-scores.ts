// The Intervention tab's result on a task head's checkpoint: every label's logit and score before → after with bars
// (the decision marked, changes highlighted), each token's label before → after, or the answer span before → after.
import type { DecisionView } from '../../../src/shared/interventions';
import { pieceLabel } from '../../../src/shared/token-layout';
import { el } from '../../common/dom';
import { barWidth, fmtDelta, fmtNum, fmtScore, labelChanges, spanChange, tokenChanges } from './task-scores-model';

/** Under a label's name: whether it is the head's decision before, after, or both. */
function predictedMark(before: boolean, after: boolean): HTMLElement | string {
  if (!before && !after) return '';
  const what = before && after ? 'predicted' : before ? 'predicted before' : 'predicted after';
  return el('div', { class: 'ts-mark', title: 'The label with the largest logit' }, [`● ${what}`]);
}

const bar = (score: number, fn: 'softmax' | 'sigmoid' | 'none', which: 'before' | 'after') => {
  const b = el('span', { class: `ts-bar ts-bar-${which}` });
  b.style.width = `${barWidth(score, fn)}%`;
  return el('span', { class: 'ts-track' }, [b]);
};

/** The decision before and after, drawn for its kind; a line when the two do not match (they always should). */
export function taskScores(before: DecisionView | undefined, after: DecisionView | undefined): HTMLElement {
  if (!before || !after || before.kind !== after.kind)
    return el('p', { class: 'meta' }, ['The head gave no output to compare (explain again, then run).']);
  if (before.kind === 'labels' && after.kind === 'labels') {
    const fn = before.scoreFunction;
    const c = labelChanges(before, after);
    const rows = c.rows.map((r) =>
      el('tr', { 'data-label': r.label, class: [r.changed ? 'changed' : '', r.predictedAfter ? 'predicted' : ''].join(' ').trim() }, [
        el('th', { scope: 'row' }, [r.label, predictedMark(r.predictedBefore, r.predictedAfter)]),
        el('td', { class: 'num' }, [`${fmtNum(r.logitBefore)} → ${fmtNum(r.logitAfter)}`]),
        el('td', { class: 'ts-scores' }, [
          el('div', {}, [
            el('span', { class: 'ts-which' }, ['before ']),
            bar(r.scoreBefore, fn, 'before'),
            ` ${fmtScore(r.scoreBefore, fn)}`,
          ]),
          el('div', {}, [el('span', { class: 'ts-which' }, ['after ']), bar(r.scoreAfter, fn, 'after'), ` ${fmtScore(r.scoreAfter, fn)}`]),
        ]),
        el('td', { class: 'num ts-delta' }, [
          fn === 'none' ? fmtDelta(r.logitAfter - r.logitBefore) : fmtDelta(100 * (r.scoreAfter - r.scoreBefore), 1),
        ]),
      ]),
    );
    return el('div', { id: 'ts-labels' }, [
      el('p', { id: 'ts-summary', class: c.flipped ? 'ts-summary flipped' : 'ts-summary' }, [c.summary]),
      el('table', { id: 'ts-table', class: 'iv-table ts-table' }, [
        el('thead', {}, [
          el(
            'tr',
            {},
            ['Label', 'Logit before → after', fn === 'none' ? 'Value' : 'Score', fn === 'none' ? 'Δ' : 'Δ (points)'].map((h) =>
              el('th', { scope: 'col' }, [h]),
            ),
          ),
        ]),
        el('tbody', {}, rows),
      ]),
    ]);
  }
  if (before.kind === 'tokens' && after.kind === 'tokens') {
    const c = tokenChanges(before, after);
    const rows = c.rows.map((r) =>
      el('tr', { 'data-position': String(r.position), class: r.changed ? 'changed' : '' }, [
        el('th', { scope: 'row' }, [`${r.position}: `, el('span', { class: 'tok-text' }, [pieceLabel(r.token)])]),
        el('td', {}, [`${r.before} `, el('span', { class: 'meta' }, [fmtScore(r.scoreBefore, 'softmax')])]),
        el('td', {}, [`${r.after} `, el('span', { class: 'meta' }, [fmtScore(r.scoreAfter, 'softmax')])]),
      ]),
    );
    return el('div', { id: 'ts-tokens' }, [
      el('p', { id: 'ts-summary', class: c.changed.length ? 'ts-summary flipped' : 'ts-summary' }, [c.summary]),
      el('table', { id: 'ts-table', class: 'iv-table ts-table' }, [
        el('thead', {}, [
          el(
            'tr',
            {},
            ['Token', 'Label before', 'Label after'].map((h) => el('th', { scope: 'col' }, [h])),
          ),
        ]),
        el('tbody', {}, rows),
      ]),
    ]);
  }
  if (before.kind === 'span' && after.kind === 'span') {
    const line = spanChange(before, after);
    return el('div', { id: 'ts-span' }, [
      el('p', { id: 'ts-summary', class: line.startsWith('Answer changed') ? 'ts-summary flipped' : 'ts-summary' }, [line]),
    ]);
  }
  if (before.kind === 'choices' && after.kind === 'choices') {
    const rows = before.choices.map((b, k) => {
      const a = after.choices[k];
      return el('tr', {}, [
        el('th', { scope: 'row' }, [b.text]),
        el('td', { class: 'num' }, [`${fmtNum(b.logit)} → ${fmtNum(a?.logit ?? NaN)}`]),
        el('td', { class: 'num' }, [`${fmtScore(b.score, 'softmax')} → ${fmtScore(a?.score ?? NaN, 'softmax')}`]),
      ]);
    });
    return el('table', { id: 'ts-table', class: 'iv-table ts-table' }, [el('tbody', {}, rows)]);
  }
  return el('p', { class: 'meta' }, ['The head gave no output to compare.']);
}
