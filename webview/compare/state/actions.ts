// The ways the compare panel's components change its state; several atoms change in one batch so that each
// subscriber runs once with the whole change.
import { batch } from 'nanostores';
import {
  kindsFor,
  type CompareInit,
  type CompareKind,
  type CompareSide,
  type CompareSliceRequest,
  type Side,
} from '../../../src/shared/protocol/compare';
import { $difference } from './selectors';
import {
  $cell,
  $errors,
  $hover,
  $matrices,
  $pair,
  $picks,
  $pinned,
  $view,
  $viewport,
  type CompareView,
  type SideMatrix,
  type Viewport,
} from './store';

/** What survives the panel being hidden (its page is torn down): the pickers and the tab, for that pair. */
export interface SavedCompare {
  pairId: number;
  view: CompareView;
  a: CompareSliceRequest;
  b: CompareSliceRequest;
}

/** `want` when the side offers it in that layer, else probs (BERT's split exists in layer 0 only). */
function termFor(info: CompareSide, layer: number, want: CompareKind): CompareKind {
  return kindsFor(info, layer).includes(want) ? want : 'probs';
}

/** A side's pickers: the first layer, head 0, probs; a saved choice where the side has it. */
export function initialPick(info: CompareSide, saved?: CompareSliceRequest): CompareSliceRequest {
  const layer = saved && info.layers.includes(saved.layer) ? saved.layer : (info.layers[0] ?? 0);
  const head = saved && saved.head >= 0 && saved.head < info.heads ? saved.head : 0;
  return { layer, head, kind: termFor(info, layer, saved?.kind ?? 'probs') };
}

/** A new pair: everything starts over, but the pickers and tab saved for this pair (panel hidden and shown). */
export function openPair(pair: CompareInit, saved: Partial<SavedCompare> | undefined, viewport: Viewport): void {
  const before = saved && typeof saved === 'object' && saved.pairId === pair.pairId ? saved : undefined;
  batch(() => {
    $pair.set(pair);
    const start = pair.start ? { ...pair.start, kind: 'probs' as const } : undefined;
    $picks.set({ a: initialPick(pair.a, before?.a ?? start), b: initialPick(pair.b, before?.b ?? start) });
    $matrices.set({});
    $errors.set({});
    $view.set(before?.view ?? 'sides');
    $hover.set(null);
    $pinned.set(null);
    $cell.set(null);
    $viewport.set(viewport);
  });
}

export function closePair(): void {
  $pair.set(undefined);
}

/** A side's pickers moved: a new layer keeps the term where that layer offers it. */
export function pick(side: Side, change: Partial<CompareSliceRequest>): void {
  const pair = $pair.get();
  const picks = $picks.get();
  if (!pair || !picks) return;
  const next = { ...picks[side], ...change };
  next.kind = termFor(pair[side], next.layer, next.kind);
  $picks.set({ ...picks, [side]: next });
}

export function received(side: Side, m: SideMatrix): void {
  batch(() => {
    $matrices.set({ ...$matrices.get(), [side]: m });
    $errors.set({ ...$errors.get(), [side]: '' });
  });
}

export function failed(side: Side, message: string): void {
  $errors.set({ ...$errors.get(), [side]: message });
}

export function showView(v: CompareView): void {
  $view.set(v);
}

/** The pointer is on token i of `side` (strip or heatmap row; `j`: the key column on a heatmap cell), or nothing. */
export function hoverToken(side: Side, i: number | null, j: number | null): void {
  batch(() => {
    $hover.set(i === null ? null : { side, i });
    $cell.set(i !== null && j !== null ? { side, i, j } : null);
  });
}

/** The pointer is on an aligned span of the alignment strip, or left it. */
export function hoverGroup(g: number | null): void {
  $hover.set(g === null ? null : { group: g });
}

/** The pointer is on row i of the difference: a token of A, or a span when the difference is pooled. */
export function hoverDifferenceRow(i: number | null): void {
  const d = $difference.get();
  if (i === null || !d?.ok) $hover.set(null);
  else $hover.set(d.pooled ? { group: i } : { side: 'a', i });
}

/** A click pins what is hovered, or releases the pin. */
export function togglePin(): void {
  $pinned.set($pinned.get() ? null : $hover.get());
}

export function unpin(): void {
  $pinned.set(null);
}

export function resized(viewport: Viewport): void {
  $viewport.set(viewport);
}
