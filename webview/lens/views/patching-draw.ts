// The Patching tab's pictures: the causal trace (layer × position) and the head-term grids as tables of coloured
// cells on one diverging scale with its colour bar, and the flow graph as SVG. Hover says a cell's numbers, a
// click opens the heatmap at that layer (and head), the row pinned.
import type { TermName } from '../../../src/shared/kinds';
import type { PatchView } from '../../../src/shared/patching';
import { makeLut } from '../../common/colors';
import { type Range } from '../../../src/shared/value-range';
import { el, themeKind } from '../../common/dom';
import { pin, update } from '../state/actions';
import { openedKind } from '../state/nav';
import { $kinds } from '../state/selectors';
import { readout } from './kit';
import {
  cellColours,
  cellReadout,
  edgeReadout,
  flowLayout,
  residRowLabels,
  restoredRange,
  restoredText,
  restoredValues,
} from './patching-model';
import { flowSvg } from './patching-flow';

/** The flow's drawing filter: edges at least this share of the strongest (the reader's pick, kept across draws). */
const FLOW_MIN: [number, string][] = [
  [0, 'every kept edge'],
  [0.05, 'edges ≥ 5% of the strongest'],
  [0.1, 'edges ≥ 10% of the strongest'],
  [0.25, 'edges ≥ 25% of the strongest'],
];
let flowMin = 0.1;
/** The share of the strongest edge below which the flow is not drawn (the figure export draws the same). */
export const flowMinShown = (): number => flowMin;

/** Above this many tokens the causal trace's cells carry no numbers (colour only; hover for them). */
const NUMBERED_TOKENS = 32;

/** Opens the heatmap at `layer` (and `head` in `term`), row `row` pinned and key `col` under inspection. */
function openAt(layers: number, layer: number, row: number | null, col: number | null = null, head?: number, term?: TermName): void {
  const shown = term ? openedKind(term, $kinds.get()) : undefined;
  update({
    view: 'heatmap',
    // The final state (row L of the causal trace) comes out of the last layer.
    layer: Math.min(layer, layers - 1),
    ...(head === undefined ? {} : { head, headAgg: null }),
    ...(shown ? { term: shown } : {}),
  });
  pin(row, col);
}

/** A horizontal colour bar for `range` with its ends and 0 labelled. */
function colourBar(range: Range, lut: Uint8ClampedArray): HTMLElement {
  const stops = Array.from({ length: 11 }, (_, k) => {
    const v = range.min + ((range.max - range.min) * k) / 10;
    return `${cellColours(v, range, lut).bg} ${k * 10}%`;
  });
  const bar = el('span', { class: 'pt-bar', 'aria-hidden': 'true' });
  bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
  return el('span', { class: 'pt-colourbar', id: 'pt-colourbar' }, [
    el('span', {}, [restoredText(range.min)]),
    bar,
    el('span', {}, [restoredText(range.max)]),
    el('span', { class: 'meta' }, [' restored fraction (0 = corrupt, 1 = clean)']),
  ]);
}

/** One grid as a table: `rows` × `cols` restored fractions, row and column headers, a click per cell. */
function gridTable(
  id: string,
  restored: readonly (readonly (number | null)[])[],
  value: readonly (readonly number[])[],
  rowLabels: readonly string[],
  colLabels: readonly string[],
  range: Range,
  lut: Uint8ClampedArray,
  numbered: boolean,
  hover: (r: number, c: number) => string,
  click: (r: number, c: number) => void,
  marked?: readonly number[],
): HTMLElement {
  const head = el('tr', {}, [
    el('th', {}, ['']),
    ...colLabels.map((c, j) =>
      el(
        'th',
        { scope: 'col', class: `${numbered ? '' : 'pt-vertical'}${marked?.includes(j) ? ' pt-differs' : ''}`, title: `${j}: ${c}` },
        [c],
      ),
    ),
  ]);
  const body = restored.map((row, r) =>
    el('tr', {}, [
      el('th', { scope: 'row' }, [rowLabels[r] ?? '']),
      ...row.map((x, c) => {
        const { bg, fg } = cellColours(x, range, lut);
        const cell = el(
          'td',
          { class: `pt-cell${numbered ? '' : ' pt-dense'}`, tabindex: '0', 'data-row': String(r), 'data-col': String(c) },
          [numbered ? restoredText(x) : ''],
        );
        cell.style.background = bg;
        cell.style.color = fg;
        cell.dataset.value = String(value[r]?.[c] ?? '');
        cell.addEventListener('mouseenter', () => readout(hover(r, c)));
        cell.addEventListener('focus', () => readout(hover(r, c)));
        cell.addEventListener('click', () => click(r, c));
        cell.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') click(r, c);
        });
        return cell;
      }),
    ]),
  );
  return el('div', { class: 'pt-scroll' }, [el('table', { id, class: 'pt-grid' }, [el('thead', {}, [head]), el('tbody', {}, body)])]);
}

/** The trace's picture into `out`. */
export function drawTrace(out: HTMLElement, v: PatchView, onRedraw?: () => void): void {
  document.getElementById('analysis-readout')?.removeAttribute('hidden');
  const g = v.grid;
  const lut = makeLut('diverging', true, themeKind());
  const target = v.targetPosition;
  if (g.kind === 'resid') {
    const range = restoredRange([restoredValues(g.restored)]);
    const table = gridTable(
      'pt-grid-resid',
      g.restored,
      g.value,
      residRowLabels(v.layers),
      v.tokens.map((t, i) => (v.differing.includes(i) ? `${t}*` : t)),
      range,
      lut,
      v.tokens.length <= NUMBERED_TOKENS,
      (l, i) =>
        cellReadout(
          v,
          `state entering layer ${l === v.layers ? `${l} (final)` : l}, position ${i}`,
          v.tokens[i],
          g.value[l]?.[i],
          g.restored[l]?.[i],
        ),
      (l, i) => openAt(v.layers, l, i),
      v.differing,
    );
    return void out.replaceChildren(
      colourBar(range, lut),
      el('p', { class: 'meta' }, [
        'Rows: the hidden state entering each layer (last: the final state); columns: tokens (* differs in the corrupted text). Each cell: that one state put back from the clean run.',
      ]),
      table,
    );
  }
  if (g.kind === 'heads') {
    const range = restoredRange(g.terms.map((t) => restoredValues(g.restored[t] ?? [])));
    const heads = Array.from({ length: v.heads }, (_, h) => `h${h}`);
    const layers = Array.from({ length: v.layers }, (_, l) => `L${l}`);
    const grids = g.terms.map((t) =>
      el('figure', { class: 'pt-term' }, [
        el('figcaption', {}, [`${t} patched`]),
        gridTable(
          `pt-grid-${t}`,
          g.restored[t] ?? [],
          g.value[t] ?? [],
          layers,
          heads,
          range,
          lut,
          true,
          (l, h) =>
            cellReadout(
              v,
              `layer ${l}, head ${h}, ${t}`,
              target === null ? undefined : v.tokens[target],
              g.value[t]?.[l]?.[h],
              g.restored[t]?.[l]?.[h],
            ),
          (l, h) => openAt(v.layers, l, target, null, h, t),
        ),
      ]),
    );
    return void out.replaceChildren(colourBar(range, lut), el('div', { class: 'pt-terms' }, grids));
  }
  const layout = flowLayout(g, v.layers, flowMin);
  if (g.edges.length === 0) {
    out.replaceChildren(
      el('p', { id: 'pt-flow-empty' }, [
        `No attention edge moves the target by more than ${g.threshold.toPrecision(3)} (${g.knockouts} knockouts tried).`,
      ]),
    );
    return;
  }
  const width = Math.max(360, Math.min(out.clientWidth || document.body.clientWidth - 32, 1100));
  const { svg } = flowSvg(layout, {
    labels: v.tokens,
    terms: v.terms,
    theme: themeKind(),
    width,
    note: `${layout.edges.length} of ${g.edges.length} edges over the threshold ${g.threshold.toPrecision(3)} shown (of ${g.knockouts} knockouts); target rows ${g.targetRows.join(', ')}.`,
  });
  const filter = el(
    'select',
    { id: 'pt-flow-min', 'aria-label': 'Edges drawn' },
    FLOW_MIN.map(([w, text]) => el('option', { value: String(w) }, [text])),
  );
  filter.value = String(flowMin);
  filter.addEventListener('change', () => {
    flowMin = Number(filter.value);
    drawTrace(out, v, onRedraw);
    onRedraw?.();
  });
  const box = el('div', { id: 'pt-flow', class: 'pt-flow' });
  // Our own markup, every text escaped (patching-flow.ts): the graph is one SVG the export writes as it is.
  box.innerHTML = svg;
  for (const line of box.querySelectorAll<SVGLineElement>('line.pt-edge')) {
    const [layer, to, from] = (line.dataset.edge ?? '').split(':').map(Number) as [number, number, number];
    const e = g.edges.find((x) => x.layer === layer && x.to === to && x.from === from);
    if (!e) continue;
    line.addEventListener('mouseenter', () => readout(edgeReadout(v, e)));
    line.addEventListener('click', () => openAt(v.layers, layer, to, from));
  }
  out.replaceChildren(el('p', { class: 'meta' }, ['Draw ', filter, ' (the CSV and JSON hold every kept edge)']), box);
}
