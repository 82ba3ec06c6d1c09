// A pair arrives (a new Compare, or the panel shown again): the page is built for it, the store starts over with
// the pickers and tab saved for this pair, and both sides ask for their first matrix.
import type { CompareInit } from '../../src/shared/protocol/compare';
import type { AlignmentView } from './alignment-view';
import type { DifferenceView } from './difference-view';
import { host } from './host';
import type { SliceRequests } from './requests';
import { buildCompareShell } from './shell';
import type { CompareSides } from './sides';
import { measureViewport } from './sizes';
import { openPair } from './state/actions';
import type { CompareToolbar } from './toolbar';

export interface ComparePanel {
  requests: SliceRequests;
  toolbar: CompareToolbar;
  alignment: AlignmentView;
  difference: DifferenceView;
  sides: CompareSides;
}

export function openComparePair(pair: CompareInit, panel: ComparePanel): void {
  panel.requests.reset();
  buildCompareShell({
    toolbar: panel.toolbar.mount(pair),
    alignment: panel.alignment.mount(pair),
    difference: panel.difference.mount(),
    sides: panel.sides.mount(pair),
  });
  openPair(pair, host.saved(), measureViewport());
  // An atom set to the value it had tells no one: the new DOM is shown from the store whatever changed.
  for (const c of [panel.toolbar, panel.alignment, panel.difference, panel.sides]) c.render();
}
