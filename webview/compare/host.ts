// The compare panel's line to the extension host: messages out, and its pickers and tab kept while it is hidden.
import type { CompareToHost } from '../../src/shared/protocol/compare';
import { hostChannel } from '../common/vscode-api';
import type { SavedCompare } from './state/actions';
import { $pair, $picks, $view } from './state/store';

export const host = hostChannel<CompareToHost, SavedCompare>();

/** Every change of the pickers or the tab is saved with its pair, so hiding and showing the panel keeps them. */
export function persistCompareState(): void {
  const save = () => {
    const pair = $pair.get();
    const picks = $picks.get();
    if (pair && picks) host.save({ pairId: pair.pairId, view: $view.get(), a: picks.a, b: picks.b });
  };
  $picks.listen(save);
  $view.listen(save);
}
