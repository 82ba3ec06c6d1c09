// The hover readout: six lines of fixed height (pair, a two-line grid of values, distance, what raises the
// score, what lowers it or the compared heads), so the layout under the pointer never moves. Builds DOM only; app/readout-view.ts places it.
import { formatSigned, formatValue } from '../../../src/shared/format';
import { distanceText, pairValues, type BucketTable, type SignedNeighbours, type Neighbour } from '../../../src/shared/hover';
import { isRawTerm, KIND_SHORT, type MatrixKind } from '../../../src/shared/kinds';
import { el } from '../../common/dom';
import { listLabel, type ListKind } from './list-label';

export interface ReadoutInput {
  /** "Layer 2, head 5 (pinned)". */
  where: string;
  term: MatrixKind;
  kinds: readonly MatrixKind[];
  i: number;
  j: number | null;
  nbs: SignedNeighbours;
  rows: Partial<Record<MatrixKind, Float32Array>>;
  name: (k: number) => string;
  buckets?: BucketTable;
  compare?: { head: number; value: number }[];
  negatives: number;
}

export function idleReadout(): HTMLElement[] {
  return [
    el('div', {}, ['Hover a token or a heatmap cell (click pins, Escape clears).']),
    el('div', { class: 'meta' }, ['Wheel or + / − zoom the heatmap, drag pans, 0 fits.']),
  ];
}

function neighbourList(
  kind: ListKind,
  term: MatrixKind,
  list: Neighbour[],
  cls: string,
  i: number,
  name: (k: number) => string,
  row: Float32Array | undefined,
): HTMLElement {
  // Items wrap as wholes onto hidden lines (CSS): a value is shown entire or not at all, never cut; the label then
  // says how many are out of sight (fitNeighbourLists) and the line's tooltip lists them all.
  const label = listLabel(kind, term, list.length, list.length);
  const line = el('div', { class: 'meta nbs', title: `${label} ${list.map((nb) => name(nb.j)).join(', ')}` }, [
    el('span', { class: 'nbs-label', 'data-list': kind, 'data-term': term }, [label]),
  ]);
  list.forEach((nb, rank) => {
    const v = cls ? formatSigned(nb.value) : formatValue(nb.value);
    // Keys with exactly the same value (c2p keys in one log bucket) are one number, not a ranking: say so.
    const ties = row ? countEqual(row, nb.value) : 1;
    line.append(
      el(
        'span',
        { class: cls, 'data-rank': String(rank), 'data-query': String(i), 'data-key': String(nb.j), 'data-value': String(nb.value) },
        [`${name(nb.j)} ${v}${ties > 1 ? ` (tie ×${ties})` : ''}`],
      ),
    );
  });
  if (!list.length) line.append(el('span', {}, ['none']));
  return line;
}

/** After layout: each neighbour list's title counts the items that fit its box ("Top 5 by probs (+3 on hover):"),
 *  so a list never names more than it shows. The title's own width moves items, so it is measured again. */
export function fitNeighbourLists(root: HTMLElement): void {
  for (const line of root.querySelectorAll<HTMLElement>('.nbs')) {
    const label = line.querySelector<HTMLElement>('.nbs-label');
    const items = [...line.querySelectorAll<HTMLElement>('[data-rank]')];
    if (!label || !items.length) continue;
    const kind = (label.dataset.list ?? 'top') as ListKind;
    for (let pass = 0; pass < 3; pass++) {
      const bottom = line.offsetTop + line.clientHeight;
      const shown = items.filter((x) => x.offsetTop + x.offsetHeight <= bottom + 1).length;
      const text = listLabel(kind, label.dataset.term ?? '', shown, items.length);
      if (text === label.textContent) break;
      label.textContent = text;
    }
  }
}

function countEqual(row: Float32Array, v: number): number {
  let c = 0;
  for (let k = 0; k < row.length; k++) if (row[k] === v) c++;
  return c;
}

export function readoutLines(r: ReadoutInput): HTMLElement[] {
  const parts: HTMLElement[] = [];
  const head = `${r.where}: query ${r.name(r.i)}`;
  const target = r.j ?? r.nbs.top[0]?.j;
  if (target !== undefined) {
    const v = pairValues(r.rows, target);
    const dl = el('dl', { class: 'pair' });
    // The softmax's numbers first: on a narrow panel the line is cut at the right, never there.
    for (const k of [...r.kinds].reverse()) {
      const x = v[k];
      if (x === undefined) continue;
      dl.append(el('dt', {}, [KIND_SHORT[k]]), el('dd', { 'data-kind': k }, [formatValue(x)]));
    }
    parts.push(el('div', {}, [`${head} → key ${r.name(target)}${r.j === null ? ` (top by ${r.term})` : ''}`]), dl);
    parts.push(el('div', { class: 'meta', id: 'readout-distance' }, [distanceText(r.i, target, r.buckets)]));
  } else parts.push(el('div', {}, [head]), el('dl', { class: 'pair' }), el('div', { class: 'meta' }, ['']));
  const raw = isRawTerm(r.term);
  const top = neighbourList(raw ? 'raises' : 'top', r.term, r.nbs.top, raw ? 'pos' : '', r.i, r.name, r.rows[r.term]);
  // Without a "lowers it" list (or the compared heads' line) the top list has the readout's last line too.
  if (!raw && !r.compare) top.classList.add('two-lines');
  parts.push(top);
  if (raw) parts.push(neighbourList('lowers', r.term, r.nbs.negative.slice(0, r.negatives), 'neg', r.i, r.name, r.rows[r.term]));
  else if (r.compare)
    parts.push(
      el('div', { class: 'meta' }, [
        `${r.term} across compared heads: ${r.compare.map((c) => `head ${c.head}: ${formatValue(c.value)}`).join(' · ')}`,
      ]),
    );
  return parts;
}
