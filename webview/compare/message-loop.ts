// Messages from the extension host to the compare panel: a pair to show (or none) and the matrices it asked for.
import type { CompareToWebview } from '../../src/shared/compare-protocol';
import { listenForHost, showEmpty } from '../host-messages';
import { openComparePair, type ComparePanel } from './open-pair';
import { closePair } from './state/actions';

export function listenToCompareHost(panel: ComparePanel): void {
  listenForHost<CompareToWebview>({
    init: (m) => openComparePair(m.init, panel),
    empty: (m) => {
      closePair();
      showEmpty(m.message);
    },
    response: (m) => panel.requests.receive(m),
  });
}
