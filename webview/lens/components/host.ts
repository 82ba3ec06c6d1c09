// The main panel's line to the extension host: messages out, and the reader's state kept while the panel is hidden.
import type { PersistedState, WebviewToHost } from '../../../src/shared/protocol/lens';
import { $viewState } from '../state/store';
import { hostChannel } from '../../common/vscode-api';

const channel = hostChannel<WebviewToHost, PersistedState>();

export function post(m: WebviewToHost): void {
  channel.post(m);
}

/** The state saved before the panel was last hidden (or by an earlier page of this panel). */
export function savedState(): Partial<PersistedState> | undefined {
  return channel.saved();
}

/** Flags of the page's own layout (the toolbar's folded group), saved with the reader's state. */
let uiFlags: Record<string, unknown> = {};

export function saveUiFlags(flags: Record<string, unknown>): void {
  uiFlags = { ...uiFlags, ...flags };
  const s = $viewState.get() ?? channel.saved();
  channel.save({ ...s, ...uiFlags } as PersistedState);
}

/** Every change of the reader's state is saved, so hiding and showing the panel keeps it. */
export function persistViewState(): void {
  $viewState.listen((s) => {
    if (s) channel.save({ ...s, ...uiFlags });
  });
}
