// The page's line to the extension host, for either panel: messages out, and the state VS Code keeps while the
// panel is hidden. Each panel names its own message and state types.

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

let api: VsCodeApi | undefined;

/** Plain functions (no `this`): a component may pass `post` on as it is. */
export interface HostChannel<Out, Saved> {
  post: (message: Out) => void;
  /** What the page saved before the panel was last hidden (unchecked: an older page may have written it). */
  saved: () => Partial<Saved> | undefined;
  save: (state: Saved) => void;
}

export function hostChannel<Out, Saved>(): HostChannel<Out, Saved> {
  // acquireVsCodeApi may be called once per page.
  const vscode = (api ??= acquireVsCodeApi());
  return {
    post: (m) => vscode.postMessage(m),
    saved: () => vscode.getState() as Partial<Saved> | undefined,
    save: (s) => vscode.setState(s),
  };
}
