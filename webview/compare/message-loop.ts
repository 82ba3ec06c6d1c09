// Messages from the extension host to the compare panel: a pair to show (or none) and the matrices it asked for.
import type { CompareToWebview } from '../../src/shared/protocol/compare';
import { listenForHost, markStale, showEmpty } from '../common/host-messages';
import { openComparePair, type ComparePanel } from './open-pair';
import { closePair } from './state/actions';

export function listenToCompareHost(panel: ComparePanel): void {
  listenForHost<CompareToWebview>({
    init: (m) => {
      markStale(null, '', '');
      openComparePair(m.init, panel);
    },
    empty: (m) => {
      closePair();
      showEmpty(m.message);
    },
    stale: (m) => markStale(m.message, 'Last comparison failed', 'Below: the previous pair, not the one just asked for.'),
    response: (m) => panel.requests.receive(m),
  });
}
