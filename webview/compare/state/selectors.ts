// Values derived from the compare store: what the linked hover lights up on each side and in the alignment
// strip, each side's readout line, and the difference on screen. Worked out once per change, as `computed`
// selectors over pure functions (the functions are tested under node).
import { computed, keepMount } from 'nanostores';
import { SIDES, type CompareInit, type Side } from '../../../src/shared/protocol/compare';
import { formatValue } from '../../../src/shared/format';
import { topKeys } from '../../../src/shared/token-alignment';
import { difference, type Difference } from '../difference';
import { $cell, $hover, $matrices, $pair, $pinned, $view, type Cell, type CompareHover, type SideMatrix } from './store';

/** Keys lit up per side on hover. */
const TOP = 5;

type Matrices = Partial<Record<Side, SideMatrix>>;

/** What one side lights up: the query tokens, their strongest keys, and the heatmap row to outline. */
export interface SideFocus {
  query: number[];
  keys: { j: number; weight: number }[];
  row: number | null;
}
export interface Focus {
  sides: Record<Side, SideFocus>;
  /** The aligned span the hover stands for, if any. */
  group: number | null;
  /** The spans holding each side's lit keys. */
  keyGroups: Record<Side, number[]>;
}

/** The tokens of each side the hover stands for: the aligned span's, else only the hovered token. */
function queryTokens(pair: CompareInit, h: CompareHover | null, side: Side): number[] {
  if (!h) return [];
  const al = pair.alignment;
  if ('group' in h) return al.ok ? [...(al.groups[h.group]?.[side] ?? [])] : [];
  if (al.ok) {
    const g = (h.side === 'a' ? al.groupOfA : al.groupOfB)[h.i] ?? -1;
    const group = al.groups[g];
    if (group) return [...group[side]];
  }
  return h.side === side ? [h.i] : [];
}

function groupOf(pair: CompareInit, h: CompareHover | null): number | null {
  if (!h || !pair.alignment.ok) return null;
  if ('group' in h) return h.group;
  const g = (h.side === 'a' ? pair.alignment.groupOfA : pair.alignment.groupOfB)[h.i] ?? -1;
  return g >= 0 ? g : null;
}

export function focusOf(pair: CompareInit | undefined, matrices: Matrices, h: CompareHover | null): Focus {
  const none: SideFocus = { query: [], keys: [], row: null };
  const focus: Focus = { sides: { a: none, b: none }, group: null, keyGroups: { a: [], b: [] } };
  if (!pair) return focus;
  for (const side of SIDES) {
    const q = queryTokens(pair, h, side);
    const m = matrices[side];
    const keys = m && q.length ? topKeys(m.values, m.n, q, TOP) : [];
    focus.sides[side] = { query: q, keys, row: h && 'side' in h && h.side === side ? h.i : (q[0] ?? null) };
    if (pair.alignment.ok) {
      const of = side === 'a' ? pair.alignment.groupOfA : pair.alignment.groupOfB;
      focus.keyGroups[side] = keys.map((k) => of[k.j] ?? -1).filter((g) => g >= 0);
    }
  }
  focus.group = groupOf(pair, h);
  return focus;
}

const tokenText = (pair: CompareInit, side: Side, i: number) => pair[side].tokens[i]?.text ?? String(i);

/** Each side's line for the hovered cell: the cell itself, and on the other side the mean over the aligned spans (null: the hint). */
export function readoutsOf(pair: CompareInit | undefined, matrices: Matrices, cell: Cell | null): Record<Side, string | null> {
  const out: Record<Side, string | null> = { a: null, b: null };
  if (!pair || !cell) return out;
  for (const side of SIDES) {
    const m = matrices[side];
    if (!m) continue;
    if (side === cell.side) {
      out[side] =
        `${tokenText(pair, side, cell.i)} → ${tokenText(pair, side, cell.j)}: ${m.kind} ${formatValue(m.values[cell.i * m.n + cell.j] ?? NaN)}`;
      continue;
    }
    const al = pair.alignment;
    const of = al.ok ? (cell.side === 'a' ? al.groupOfA : al.groupOfB) : [];
    const gi = al.ok ? al.groups[of[cell.i] ?? -1] : undefined;
    const gj = al.ok ? al.groups[of[cell.j] ?? -1] : undefined;
    const rows = gi?.[side] ?? [];
    const cols = gj?.[side] ?? [];
    if (!gi || !gj || !rows.length || !cols.length) {
      out[side] = 'no tokens here cover the same characters';
      continue;
    }
    let sum = 0;
    for (const i of rows) for (const j of cols) sum += m.values[i * m.n + j] ?? NaN;
    const many = rows.length * cols.length > 1 ? `, mean of ${rows.length}×${cols.length} tokens` : '';
    out[side] =
      `${JSON.stringify(gi.text)} → ${JSON.stringify(gj.text)}: ${m.kind} ${formatValue(sum / (rows.length * cols.length))}${many}`;
  }
  return out;
}

/** The hover on screen: the pinned one while there is a pin. */
export const $shownHover = computed([$hover, $pinned], (hover, pinned) => pinned ?? hover);

export const $focus = computed([$pair, $matrices, $shownHover], focusOf);

export const $readouts = computed([$pair, $matrices, $cell], readoutsOf);

/** The Difference tab's content; undefined while the sides are on screen (worked out only when shown). */
export const $difference = computed([$view, $pair, $matrices], (view, pair, m): Difference | undefined =>
  view === 'diff' && pair
    ? difference(m.a, m.b, { sameTokens: pair.sameTokens, alignment: pair.alignment, tokensA: pair.a.tokens })
    : undefined,
);

for (const $s of [$shownHover, $focus, $readouts, $difference]) keepMount($s);
