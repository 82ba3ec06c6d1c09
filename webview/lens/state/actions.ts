// The ways components change the reader's state. Each sets atoms in one batch, so every subscriber runs once
// with the whole change; the view is drawn again only when what it shows changed, else the hover is shown again.
import { batch } from 'nanostores';
import type { MatrixKind } from '../../../src/shared/kinds';
import { pickerLayers } from '../../../src/shared/emd-layers';
import { applyAction, openedKind, toggleCompare, type Action, type ViewState } from './nav';
import { $kinds } from './selectors';
import { $hover, $init, $renderEpoch, $viewState } from './store';

/** Changes that need new matrices (or another view) rather than a new hover on the same picture. */
function redraws(prev: ViewState, next: ViewState): boolean {
  return (
    prev.view !== next.view ||
    prev.layer !== next.layer ||
    prev.head !== next.head ||
    prev.term !== next.term ||
    prev.colorScale !== next.colorScale ||
    prev.headAgg !== next.headAgg ||
    prev.discountSpecial !== next.discountSpecial ||
    prev.preset !== next.preset ||
    prev.merge !== next.merge ||
    prev.scaling !== next.scaling
  );
}

export function requestRender(): void {
  $renderEpoch.set($renderEpoch.get() + 1);
}

/** Shows the hover again under the current state (same rows, new layer, head or pin). */
export function refreshHover(): void {
  $hover.set({ ...$hover.get() });
}

export function update(patch: Partial<ViewState>): void {
  const prev = $viewState.get();
  if (!prev) return;
  const next = { ...prev, ...patch };
  batch(() => {
    $viewState.set(next);
    // Asking for a view (a tab, the host's `show`) draws it again even when it is the one on screen.
    if (redraws(prev, next) || patch.view !== undefined) requestRender();
    else refreshHover();
  });
}

/** Opens layer/head in the heatmap (a click on a head in an analysis view); `term`: in the term it was ranked by. */
export function openHead(layer: number, head: number, term?: MatrixKind): void {
  const shown = term && $init.get() ? openedKind(term, $kinds.get()) : undefined;
  update({ layer, head, headAgg: null, view: 'heatmap', ...(shown ? { term: shown } : {}) });
}

export function act(a: Action): void {
  const state = $viewState.get();
  const init = $init.get();
  if (!state || !init) return;
  batch(() => {
    // Escape lets go of the hover as well as the pin.
    if (a.type === 'clear') $hover.set({ ...$hover.get(), i: null, j: null });
    update(applyAction(state, a, pickerLayers(init.model), init.model.heads));
  });
}

/** Pins query row i (null: unpins); j is the key column under inspection. */
export function pin(i: number | null, j: number | null = null): void {
  const state = $viewState.get();
  if (!state) return;
  batch(() => {
    $viewState.set({ ...state, pinned: i });
    $hover.set({ ...$hover.get(), i, j });
  });
}

/** Pins row i, or unpins it when it is the pinned one. */
export function togglePin(i: number, j: number | null = null): void {
  pin($viewState.get()?.pinned === i ? null : i, j);
}

/**
 * The pointer or cursor is on row i, column j (`fromStrip` when it is on the strip; unchanged when not given).
 * While a token is pinned, it only moves the key (column) under inspection.
 */
export function setHover(i: number | null, j: number | null, fromStrip?: boolean): void {
  const pinned = $viewState.get()?.pinned;
  const prev = $hover.get();
  $hover.set({ i: pinned !== null && pinned !== undefined ? pinned : i, j, fromStrip: fromStrip ?? prev.fromStrip });
}

/** Ticks or unticks head h for the side-by-side comparison. */
export function toggleCompareHead(h: number): void {
  const state = $viewState.get();
  if (state) $viewState.set({ ...state, compare: toggleCompare(state.compare, h) });
}
