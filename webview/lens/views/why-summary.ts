// "Why this label?" at the top of a task-head ranking: the heads whose removal moves the target's logit most, each
// opening that head's attention with the decision's row pinned ([CLS] for a sequence classifier), and the tokens
// that row reads (its top keys in probs, asked of the host as a `row`).
import type { RankingView } from '../../../src/shared/interventions';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import type { ViewInit } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { el } from '../../common/dom';
import { pin, update } from '../state/actions';
import type { ViewContext } from './view-context';
import { decisionRow, effectText, readsText, targetText, topKeys, whyCells } from './why-label-model';

/** Opens head (layer, head) in the heatmap on probs with query row `row` pinned. */
export function openPinned(layer: number, head: number, row: number): void {
  update({ layer, head, headAgg: null, term: 'probs', view: 'heatmap' });
  pin(row);
}

export function whySummary(
  r: RankingView,
  init: ViewInit,
  ctx: Pick<ViewContext, 'request'>,
  termLabel: (t: string) => string,
): HTMLElement {
  const row = decisionRow(r);
  const rowName = `${row} “${pieceLabel(init.tokens[row]?.text ?? '')}”`;
  const cells = whyCells(r);
  const items = cells.map((c) => {
    const reads = el('span', { class: 'meta why-reads', 'data-layer': String(c.layer), 'data-head': String(c.head) }, ['…']);
    const open = el(
      'button',
      {
        type: 'button',
        class: 'link why-open',
        'data-layer': String(c.layer),
        'data-head': String(c.head),
        title: `Open layer ${c.layer} head ${c.head} in the heatmap with row ${rowName} pinned`,
      },
      [`layer ${c.layer} head ${c.head} ${termLabel(c.term)}`],
    );
    open.addEventListener('click', () => openPinned(c.layer, c.head, row));
    // The row's top keys: what this head's decision row attends to in the plain run.
    ctx
      .request({ type: 'row', layer: c.layer, head: c.head, i: row })
      .then((res) => {
        const probs = res.rows.probs;
        reads.textContent = probs ? `; row ${row} ${readsText(topKeys(fromBuffer(probs, res.n), init.tokens, 3))}` : '';
      })
      .catch(() => (reads.textContent = ''));
    return el('li', { class: c.effect }, [open, ` — ${effectText(c)}`, reads]);
  });
  return el('section', { id: 'why-label', class: 'why-label' }, [
    el('h3', {}, [`Why ${targetText(r)}?`]),
    cells.length === 0
      ? el('p', { class: 'meta' }, ['No single head’s term moves it: every removal left the logit as it was.'])
      : el('ol', { id: 'why-list' }, items),
    el('p', { class: 'meta' }, [
      `Each link opens that head’s attention with row ${rowName} pinned: the row the head reads for the decision.`,
    ]),
  ]);
}
