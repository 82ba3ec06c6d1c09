// The Patching tab's pure logic: a grid's restored fractions as numbers and colours on one diverging scale centred
// at 0, the hover line of a cell, the flow graph's layout (layers as columns, only the tokens that have edges as
// rows), and what a figure export of each trace holds. No DOM: runs under node for the unit tests.
import type { TermName } from '../../../src/shared/kinds';
import type { PatchFlowEdge, PatchGridView, PatchView } from '../../../src/shared/patching';
import { colorOf, cssRgb, type Rgb } from '../../common/colors';
import { type Range } from '../../../src/shared/value-range';

/** Restored fractions as a Float32Array (NaN where clean and corrupt give the same value: nothing to restore). */
export function restoredValues(rows: readonly (readonly (number | null)[])[]): Float32Array {
  const cols = rows[0]?.length ?? 0;
  const out = new Float32Array(rows.length * cols).fill(NaN);
  rows.forEach((row, r) => row.forEach((x, c) => (out[r * cols + c] = x === null || !Number.isFinite(x) ? NaN : x)));
  return out;
}

/** The scale every grid of a trace shares: ±max |restored| (at least ±1, so that "all of it back" is the full colour
 *  unless a cell overshoots), centred at 0. */
export function restoredRange(grids: readonly Float32Array[]): Range {
  let m = 1;
  for (const g of grids) for (const x of g) if (Number.isFinite(x)) m = Math.max(m, Math.abs(x));
  return { min: -m, max: m, signed: true };
}

/** A cell's background and the text colour readable on it; an empty cell (null) shows the page. */
export function cellColours(x: number | null, range: Range, lut: Uint8ClampedArray): { bg: string; fg: string } {
  if (x === null || !Number.isFinite(x)) return { bg: 'transparent', fg: 'inherit' };
  const rgb = colorOf(x, range, lut);
  return { bg: cssRgb(rgb), fg: luminance(rgb) < 140 ? '#fff' : '#000' };
}

const luminance = ([r, g, b]: Rgb) => 0.299 * r + 0.587 * g + 0.114 * b;

/** A restored fraction as a cell shows it: "0.42", "−0.10", "–" for none. */
export function restoredText(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const s = x.toFixed(digits);
  // −0.00 reads as a sign where there is none.
  return (Number(s) === 0 ? s.replace('-', '') : s).replace('-', '−');
}

/** The hover line of a cell: where it is, its token, the raw patched value and the restored fraction. */
export function cellReadout(
  v: PatchView,
  where: string,
  token: string | undefined,
  value: number | undefined,
  restored: number | null | undefined,
): string {
  const tok = token === undefined ? '' : ` “${token}”`;
  const raw = value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(3).replace('-', '−');
  return `${where}${tok}: ${v.unit} ${raw} (clean ${v.clean.toFixed(3).replace('-', '−')}, corrupt ${v.corrupt.toFixed(3).replace('-', '−')}) · restored ${restoredText(restored, 3)}`;
}

/** Row labels of a causal trace: the state entering each layer, the last row the final state. */
export function residRowLabels(layers: number): string[] {
  return Array.from({ length: layers + 1 }, (_, l) => (l === layers ? `L${l} (out)` : `L${l}`));
}

export interface FlowLayout {
  /** The token rows drawn (those with an edge, and the target rows), top to bottom in text order. */
  rows: number[];
  layers: number;
  edges: (PatchFlowEdge & { fromRow: number; toRow: number; weight: number })[];
  /** Largest |change| of an edge (the widths' scale). */
  maxChange: number;
}

/** Where the flow graph puts things: layer l's edges run from column l to column l + 1, row k is `rows[k]`; an
 *  edge's weight (0…1) is its |change| over the largest. `minWeight`: edges weaker than this share of the largest
 *  are left out of the drawing (and their tokens, unless another edge has them). */
export function flowLayout(grid: Extract<PatchGridView, { kind: 'flow' }>, layers: number, minWeight = 0): FlowLayout {
  const top = Math.max(0, ...grid.edges.map((e) => Math.abs(e.change)));
  const kept = grid.edges.filter((e) => top > 0 && Math.abs(e.change) >= minWeight * top);
  const used = new Set<number>(grid.targetRows);
  for (const e of kept) used.add(e.from).add(e.to);
  const rows = [...used].sort((a, b) => a - b);
  const at = new Map(rows.map((t, k) => [t, k]));
  const maxChange = top;
  const edges = kept.map((e) => ({
    ...e,
    fromRow: at.get(e.from) ?? 0,
    toRow: at.get(e.to) ?? 0,
    weight: maxChange > 0 ? Math.abs(e.change) / maxChange : 0,
  }));
  // Weakest first, so that the strongest edges are drawn on top.
  edges.sort((a, b) => a.weight - b.weight);
  return { rows, layers, edges, maxChange };
}

/** Each term's colour in the flow: content green and position purple as the share grid has them, p2c orange. */
export const TERM_RGB: Record<TermName, Rgb> = { c2c: [27, 158, 119], c2p: [117, 112, 179], p2c: [217, 95, 2] };

/** An edge's hover line: layer, from → to, the change in the target when it is knocked out, its term(s). */
export function edgeReadout(v: PatchView, e: PatchFlowEdge): string {
  const shares = e.shares
    ? ` (${(Object.entries(e.shares) as [TermName, number][]).map(([t, s]) => `${t} ${(100 * s).toFixed(0)}%`).join(', ')})`
    : '';
  const tok = (k: number) => v.tokens[k] ?? `#${k}`;
  return `layer ${e.layer}: ${e.from} “${tok(e.from)}” → ${e.to} “${tok(e.to)}” · knocking it out moves the ${v.unit} by ${e.change >= 0 ? '+' : ''}${e.change.toFixed(4).replace('-', '−')} · carried most by ${e.term}${shares}`;
}

/** What a matrix figure of a resid or heads trace holds: values, their shape and labels. The heads trace puts its
 *  term grids side by side, a blank column between them. */
export function gridFigure(
  v: PatchView,
): { values: Float32Array; rows: number; cols: number; rowLabels: string[]; colLabels: string[] } | undefined {
  const g = v.grid;
  if (g.kind === 'resid') {
    const cols = v.tokens.length;
    return {
      values: restoredValues(g.restored),
      rows: v.layers + 1,
      cols,
      rowLabels: residRowLabels(v.layers),
      // The corrupted tokens marked, as the tab's header marks them.
      colLabels: v.tokens.map((t, i) => (v.differing.includes(i) ? `${t}*` : t)),
    };
  }
  if (g.kind !== 'heads') return undefined;
  const H = v.heads;
  const cols = g.terms.length * (H + 1) - 1;
  const values = new Float32Array(v.layers * cols).fill(NaN);
  const colLabels: string[] = new Array<string>(cols).fill('');
  g.terms.forEach((t, k) => {
    const rows = g.restored[t] ?? [];
    rows.forEach((row, l) => row.forEach((x, h) => (values[l * cols + k * (H + 1) + h] = x === null ? NaN : x)));
    for (let h = 0; h < H; h++) colLabels[k * (H + 1) + h] = h === 0 ? `${t} h0` : `h${h}`;
  });
  return { values, rows: v.layers, cols, rowLabels: Array.from({ length: v.layers }, (_, l) => `L${l}`), colLabels };
}

/** The title of a trace's figure. */
export function traceTitle(v: PatchView): string {
  const what =
    v.trace === 'resid' ? 'Causal trace (layer × position)' : v.trace === 'heads' ? 'Head terms patched alone' : 'Information flow';
  const n = (x: number) => x.toFixed(3).replace('-', '−');
  return `${what} · ${v.target} · clean ${n(v.clean)}, corrupt ${n(v.corrupt)}`;
}
