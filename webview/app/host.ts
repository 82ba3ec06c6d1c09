// The page's line to the extension host: messages out, and the state VS Code keeps while the panel is hidden.
import type { PersistedState, WebviewToHost } from '../../src/shared/protocol';
import { $viewState } from '../state/store';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: PersistedState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

// acquireVsCodeApi may be called once per page.
const vscode = acquireVsCodeApi();

export function post(m: WebviewToHost): void {
  vscode.postMessage(m);
}

/** The state saved before the panel was last hidden (or by an earlier page of this panel). */
export function savedState(): Partial<PersistedState> | undefined {
  return vscode.getState() as Partial<PersistedState> | undefined;
}

/** Every change of the reader's state is saved, so hiding and showing the panel keeps it. */
export function persistViewState(): void {
  $viewState.listen((s) => {
    if (s) vscode.setState(s);
  });
}
