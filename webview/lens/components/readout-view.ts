// The readout under the strip: the hovered query's strongest keys with their numbers, the term split of the
// cell under the pointer, its relative distance, and the compared heads' values.
import { layerLabel } from '../../../src/shared/emd-layers';
import type { SignedNeighbours } from '../../../src/shared/hover';
import { $ } from '../../common/dom';
import { fitNeighbourLists, idleReadout, readoutLines } from './readout';
import { $kinds, tokenName } from '../state/selectors';
import { $buckets, $comparePanes, $init, $merged, $viewState, type Rows } from '../state/store';
import { TOP_NEGATIVE } from './token-strip';

export function renderReadoutIdle(): void {
  $('#readout').replaceChildren(...idleReadout());
}

export function renderReadout(i: number, j: number | null, nbs: SignedNeighbours, rows: Rows): void {
  const state = $viewState.get();
  const init = $init.get();
  if (!state || !init) return;
  const n = init.tokens.length;
  const panes = $comparePanes.get();
  const buckets = $buckets.get();
  const compare =
    panes.length && j !== null && state.view === 'heads'
      ? panes.map((p) => ({ head: p.head, value: p.values[i * n + j] ?? NaN }))
      : undefined;
  const box = $('#readout');
  box.replaceChildren(
    ...readoutLines({
      where: `${layerLabel(init.model, state.layer)}, ${state.headAgg ? `${state.headAgg} of heads` : `head ${state.head}`}${state.pinned === i ? ' (pinned)' : ''}`,
      term: state.term,
      kinds: $kinds.get(),
      i,
      j,
      nbs,
      rows,
      name: tokenName,
      // Table rows index pieces: merged words have no single distance.
      buckets: !$merged.get() && buckets && buckets.n === n ? buckets : undefined,
      compare,
      negatives: TOP_NEGATIVE,
    }),
  );
  fitNeighbourLists(box);
}
