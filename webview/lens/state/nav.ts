// View state and keyboard navigation. Pure: state/actions.ts puts the resulting state in the store.
import { isSignedKind, type MatrixKind } from '../../../src/shared/kinds';
import type { ColorScaleName, PersistedState, ViewName } from '../../../src/shared/protocol/lens';
import { ABLATION_PRESETS, PROTOCOL_VERSION, SCALINGS } from '../../../src/shared/protocol/lens';
import { openingView } from '../../../src/shared/opening-view';
import { effectiveScaling } from '../../../src/shared/row-scale';

export type ViewState = PersistedState;

export type Action =
  | { type: 'layer'; delta: number }
  | { type: 'head'; delta: number }
  | { type: 'term'; term: MatrixKind }
  | { type: 'view'; view: ViewName }
  | { type: 'clear' };

/** Key → action, for the panel's global shortcuts ([ ] layers, , . heads, 1–5 terms, h/g views, Esc). */
export function keyToAction(key: string, kinds: readonly MatrixKind[]): Action | undefined {
  switch (key) {
    case '[':
      return { type: 'layer', delta: -1 };
    case ']':
      return { type: 'layer', delta: 1 };
    case ',':
      return { type: 'head', delta: -1 };
    case '.':
      return { type: 'head', delta: 1 };
    case 'Escape':
      return { type: 'clear' };
    case 'h':
      return { type: 'view', view: 'heatmap' };
    case 'g':
      return { type: 'view', view: 'heads' };
  }
  if (/^[1-9]$/.test(key)) {
    const kind = kinds[Number(key) - 1];
    return kind ? { type: 'term', term: kind } : undefined;
  }
  return undefined;
}

/** Steps through `values` (sorted layer indices, or 0..heads-1), wrapping at both ends. */
export function step(values: readonly number[], current: number, delta: number): number {
  if (!values.length) return current;
  const at = Math.max(0, values.indexOf(current));
  return values[(((at + delta) % values.length) + values.length) % values.length] ?? current;
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, k) => k);
}

export function applyAction(s: ViewState, a: Action, layers: readonly number[], heads: number): ViewState {
  switch (a.type) {
    case 'layer':
      return { ...s, layer: step(layers, s.layer, a.delta) };
    case 'head':
      return { ...s, head: step(range(heads), s.head, a.delta) };
    case 'term':
      return { ...s, term: a.term };
    case 'view':
      return { ...s, view: a.view };
    case 'clear':
      return { ...s, pinned: null };
  }
}

/**
 * Restores a saved state against a (possibly different) result: out-of-range picks fall back to defaults. The
 * view and matrix come from the shared opening view, so they are the ones the host sent ahead with the result.
 */
export function reconcileState(
  saved: Partial<PersistedState> | undefined,
  defaults: { term: MatrixKind; view: ViewName; colorScale: ColorScaleName },
  kinds: readonly MatrixKind[],
  layers: readonly number[],
  heads: number,
  n: number,
): ViewState {
  const s = saved && saved.version === PROTOCOL_VERSION ? saved : {};
  const { view, term, layer, head } = openingView({ kinds, layers, heads }, defaults, s);
  const pinned = s.pinned !== undefined && s.pinned !== null && s.pinned >= 0 && s.pinned < n ? s.pinned : null;
  const compare = (s.compare ?? []).filter((h) => h >= 0 && h < heads).slice(0, 4);
  return {
    version: PROTOCOL_VERSION,
    view,
    term,
    layer,
    head,
    pinned,
    compare,
    colorScale: s.colorScale === 'viridis' || s.colorScale === 'diverging' ? s.colorScale : defaults.colorScale,
    // Optional analysis picks: present only when set, so a state without them keeps its old shape.
    ...(s.headAgg === 'mean' || s.headAgg === 'max' ? { headAgg: s.headAgg } : {}),
    ...(s.discountSpecial === true ? { discountSpecial: true } : {}),
    ...(s.preset && ABLATION_PRESETS.includes(s.preset) ? { preset: s.preset } : {}),
    ...(s.merge === 'words' || s.merge === 'identifiers' ? { merge: s.merge } : {}),
    // Absent = the default mapping (effectiveScaling), so 'linear' is a pick like any other.
    ...(s.scaling && SCALINGS.includes(s.scaling) ? { scaling: s.scaling } : {}),
  };
}

/** Toggles a head in the side-by-side selection (at most `max`; the oldest drops out). */
export function toggleCompare(compare: readonly number[], head: number, max = 4): number[] {
  if (compare.includes(head)) return compare.filter((h) => h !== head);
  const next = [...compare, head];
  return next.length > max ? next.slice(next.length - max) : next;
}

/** A toolbar control that applies to some views only. */
export type ViewControl = 'term' | 'layer' | 'head' | 'discount' | 'merge' | 'colours' | 'legend';

/** Which toolbar controls each view reads: the others are hidden there, so nothing on screen does nothing. */
export const VIEW_CONTROLS: Readonly<Record<ViewName, readonly ViewControl[]>> = {
  heatmap: ['term', 'layer', 'head', 'discount', 'merge', 'colours', 'legend'],
  heads: ['term', 'layer', 'colours', 'legend'],
  shares: [],
  ablation: ['layer', 'head', 'colours'],
  distance: ['layer', 'head', 'colours'],
  buckets: [],
  rollout: ['colours'],
  diff: ['term', 'layer', 'head', 'colours'],
  interventions: [],
  ranking: [],
  lines: ['layer', 'head', 'merge'],
  model: ['colours'],
  patching: [],
};

/**
 * The heatmap term that shows a head ranked by removing `ranked`: that term where the picker has it; BERT, whose
 * heads are ranked by their whole score (and whose picker has no terms), in scores. Undefined: keep the term.
 */
export function openedKind(ranked: MatrixKind, kinds: readonly MatrixKind[]): MatrixKind | undefined {
  if (kinds.includes(ranked)) return ranked;
  return kinds.includes('scores') ? 'scores' : undefined;
}

/**
 * The colour mapping a kind is drawn with: none picked is the default (probs each row on a log scale, signed
 * terms linear); log applies to probabilities only (a signed term has no log).
 */
export function scalingFor(scaling: PersistedState['scaling'], kind: MatrixKind): NonNullable<PersistedState['scaling']> {
  const s = effectiveScaling(scaling, isSignedKind(kind));
  return s === 'log' && isSignedKind(kind) ? 'linear' : s;
}
