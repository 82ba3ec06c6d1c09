// Above the heatmap of an Enhanced Mask Decoder pass: what that pass's query is, and for the first pass how much of
// each query row is absolute position (‖P_i‖ / (‖H_i‖ + ‖P_i‖), shared/emd-layers.ts): a band of one cell per
// token, shaded by that share, and a line for the hovered row. Hidden on encoder layers and other views.
import { emdPassOf, emdQueryText, POSITION_SHARE_DEFINITION } from '../../../src/shared/emd-layers';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';
import { setHover } from '../state/actions';
import { $hover, $init, $merged, $viewState } from '../state/store';
import { tokenName } from './predictions-model';
import { shareLine, shareSummary, type QueryShares } from './emd-query-model';
import type { MatrixRequests } from './requests';

export class EmdQueryView {
  private root: HTMLElement = el('div');
  private shares: { resultId: number; q: QueryShares } | undefined;
  private asked: number | undefined;

  constructor(private readonly requests: MatrixRequests) {
    $viewState.subscribe(() => this.sync());
    $hover.subscribe(() => this.showRow());
  }

  /** A new result: an empty, hidden section for the shell. */
  mount(): HTMLElement {
    this.root = el('div', { id: 'emd-query', class: 'emd-query', hidden: '', role: 'group', 'aria-label': 'EMD query' });
    this.shares = undefined;
    this.asked = undefined;
    return this.root;
  }

  private sync(): void {
    const init = $init.get();
    const state = $viewState.get();
    const pass = init && state ? emdPassOf(init.model, state.layer) : undefined;
    if (!init || !state || pass === undefined || state.view !== 'heatmap') {
      this.root.hidden = true;
      return;
    }
    this.root.hidden = false;
    this.root.dataset.pass = String(pass + 1);
    const caption = el('div', { class: 'emd-caption meta' }, [emdQueryText(init.model, state.layer) ?? '']);
    if (pass === 1) {
      this.root.replaceChildren(caption);
      return;
    }
    const have = this.shares?.resultId === init.resultId ? this.shares.q : undefined;
    if (!have) {
      this.root.replaceChildren(caption, el('div', { class: 'meta', id: 'emd-share-summary' }, ['position part of the query: computing…']));
      if (this.asked !== init.resultId) {
        this.asked = init.resultId;
        this.requests
          .request({ type: 'emdQuery' })
          .then((r) => {
            if ($init.get()?.resultId !== init.resultId) return;
            this.shares = {
              resultId: init.resultId,
              q: {
                share: fromBuffer(r.share, r.n),
                contentNorm: fromBuffer(r.contentNorm, r.n),
                positionNorm: fromBuffer(r.positionNorm, r.n),
              },
            };
            this.sync();
          })
          .catch((e: unknown) => {
            this.asked = undefined;
            const line = this.root.querySelector('#emd-share-summary');
            if (line) line.textContent = `position part of the query: ${e instanceof Error ? e.message : String(e)}`;
          });
      }
      return;
    }
    const name = (i: number) => tokenName(init.tokens, i);
    const cells = Array.from(have.share, (s, i) => {
      // A bar whose height is the share on an absolute 0–100% scale (shares of one text often lie close together,
      // and a bar reads a difference of a few points where a shade does not).
      const bar = el('span', { class: 'emd-bar' });
      // CSSOM, not a style attribute: the page's CSP allows no inline styles.
      bar.style.height = `${Math.max(0, Math.min(1, s)) * 100}%`;
      const c = el('span', { class: 'emd-cell', 'data-i': String(i), 'data-share': String(s), title: shareLine(have, i, name) }, [bar]);
      c.addEventListener('mouseenter', () => setHover($merged.get() ? null : i, null, true));
      return c;
    });
    const band = el(
      'div',
      { id: 'emd-share-band', class: 'emd-band', role: 'img', 'aria-label': `EMD 1 ${POSITION_SHARE_DEFINITION}` },
      cells,
    );
    band.addEventListener('mouseleave', () => setHover(null, null));
    this.root.replaceChildren(
      caption,
      el('div', { class: 'emd-share' }, [
        el('span', { class: 'emd-share-label', title: `EMD 1's ${POSITION_SHARE_DEFINITION}` }, ['position part']),
        band,
        el('span', { class: 'emd-scale meta', 'aria-hidden': 'true' }, ['0–100%']),
      ]),
      el('div', { class: 'meta', id: 'emd-share-summary', title: POSITION_SHARE_DEFINITION }, [shareSummary(have, name)]),
      el('div', { class: 'meta', id: 'emd-share-row' }),
    );
    this.showRow();
  }

  /** The hovered query row's share (pieces only: a merged word's row has no one query). */
  private showRow(): void {
    const line = this.root.querySelector<HTMLElement>('#emd-share-row');
    const init = $init.get();
    if (!line || !init || this.shares?.resultId !== init.resultId) return;
    const i = $merged.get() ? null : $hover.get().i;
    line.textContent =
      i === null ? 'hover a row or a cell: its query’s position part' : shareLine(this.shares.q, i, (k) => tokenName(init.tokens, k));
    for (const c of this.root.querySelectorAll<HTMLElement>('.emd-cell')) c.classList.toggle('current', Number(c.dataset.i) === i);
  }
}
