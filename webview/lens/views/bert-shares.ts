// The Term shares tab for BERT: one row per head of layer 0 (the only layer whose score splits), the share of each
// of the five split terms as a number and a bar, the position total beside them, and one line for the layers
// without a split. Click a row to open that head's heatmap.
import { cssRgb } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { openHead } from '../state/actions';
import { onScreen } from '../state/selectors';
import { readout } from './kit';
import { BERT_SHARE_COLUMNS, bertOtherLayersText, bertShareText, shareColor, sharePercent, type BertShareTerm } from './shares-model';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import type { ViewContext } from './view-context';

export async function renderBertShares(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const r = await ctx.request({ type: 'shares', weighting: 'uniform' });
  if (!ctx.isCurrent()) return;
  const H = r.heads;
  const arrays: Record<BertShareTerm, Float32Array | undefined> = {
    c2c: fromBuffer(r.content, H),
    c2p: r.c2p && fromBuffer(r.c2p, H),
    p2c: r.p2c && fromBuffer(r.p2c, H),
    p2p: r.p2p && fromBuffer(r.p2p, H),
    rest: r.rest && fromBuffer(r.rest, H),
  };
  const theme = themeKind();
  // Content green and position purple, as DeBERTa's grid; the rest is neither, so it takes the text colour.
  const colour = (t: BertShareTerm) =>
    t === 'c2c' ? cssRgb(shareColor(1, theme)) : t === 'rest' ? 'var(--vscode-descriptionForeground, #888)' : cssRgb(shareColor(0, theme));
  const header = el('tr', {}, [
    el('th', { scope: 'col' }, ['head']),
    ...BERT_SHARE_COLUMNS.map((c) => el('th', { scope: 'col', title: c.title, 'data-term': c.term }, [c.term])),
    el('th', { scope: 'col', title: 'c2p + p2c + p2p' }, ['position']),
  ]);
  const rows = Array.from({ length: H }, (_, h) => {
    const share = Object.fromEntries(BERT_SHARE_COLUMNS.map(({ term }) => [term, arrays[term]?.[h] ?? NaN])) as Record<
      BertShareTerm,
      number
    >;
    const cell = (term: string, value: number, col: string) => {
      const bar = el('span', { class: 'share-bar' });
      bar.style.width = `${Math.max(0, Math.min(1, value)) * 100}%`;
      bar.style.background = col;
      return el('td', { 'data-term': term, 'data-value': String(value) }, [bar, el('span', { class: 'share-num' }, [sharePercent(value)])]);
    };
    const tr = el('tr', { 'data-head': String(h), tabindex: '0', title: `Open layer 0, head ${h}` }, [
      el('th', { scope: 'row' }, [`H${h}`]),
      ...BERT_SHARE_COLUMNS.map(({ term }) => cell(term, share[term], colour(term))),
      cell('position', share.c2p + share.p2c + share.p2p, cssRgb(shareColor(0, theme))),
    ]);
    if (state.layer === 0 && state.head === h) tr.classList.add('current');
    tr.addEventListener('mouseenter', () => readout(bertShareText(h, share)));
    tr.addEventListener('focus', () => readout(bertShareText(h, share)));
    tr.addEventListener('click', () => openHead(0, h));
    tr.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') openHead(0, h);
    });
    return tr;
  });
  const table = el('table', { id: 'bert-shares', class: 'share-table', 'aria-label': 'Layer 0: share of each split term per head' }, [
    el('caption', { class: 'meta' }, ['Layer 0 (mean over all query–key cells). Click a head to open it.']),
    el('thead', {}, [header]),
    el('tbody', {}, rows),
  ]);
  const key = (col: string, text: string) => {
    const sw = el('span', { class: 'swatch' });
    sw.style.background = col;
    return el('span', { class: 'legend-item' }, [sw, text]);
  };
  const legend = el('div', { id: 'bert-shares-legend', class: 'legend' }, [
    key(colour('c2c'), 'content (c2c)'),
    key(colour('c2p'), 'position (c2p, p2c, p2p)'),
    key(colour('rest'), 'rest: token type, LayerNorm shift, biases'),
  ]);
  // Wider than a narrow panel: the table scrolls, the page does not.
  body.append(el('div', { class: 'share-scroll' }, [table]), legend);
  const later = bertOtherLayersText(init.model.layers);
  if (later) body.append(el('p', { id: 'bert-shares-later', class: 'meta' }, [later]));
}
