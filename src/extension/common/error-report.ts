// How a failure reaches the user: a notification whose buttons can fix it (errorActions), the stack in the log.
import * as vscode from 'vscode';
import { isLensError } from '../../engine';
import { errorActions, type ErrorFixes } from './messages';
import { SECTION } from './settings';

/**
 * Opens one setting where it takes effect. A machine-overridable setting (the model folder is a path on the machine
 * that runs the model) is listed under the Remote tab in a Remote window, under User locally.
 */
export function openSetting(key: string, machine: boolean): void {
  const query = `@id:${SECTION}.${key}`;
  const remote = machine && vscode.env.remoteName !== undefined;
  const local = () => vscode.commands.executeCommand('workbench.action.openSettings', query);
  if (remote) void vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query }).then(undefined, local);
  else void local();
}

/** What a command can do about its own failure, beyond the generic buttons (ErrorFixes says which it offers). */
export interface ErrorFixers {
  selectFits?: () => void;
}

/** The `showError` every command gets: logs the failure and shows it with its actions. */
export function errorReporter(out: vscode.OutputChannel, log: (line: string) => void): (e: unknown, fixers?: ErrorFixers) => void {
  return (e, fixers = {}) => {
    const message = isLensError(e) ? e.message : `DeBERTa Lens failed: ${e instanceof Error ? e.message : String(e)}`;
    log(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    const fixes: ErrorFixes = { selectFits: fixers.selectFits !== undefined };
    void vscode.window.showErrorMessage(message, ...errorActions(e, fixes)).then((action) => {
      if (action === 'Select Text That Fits') fixers.selectFits?.();
      else if (action === 'Select Model…') void vscode.commands.executeCommand('debertaLens.selectModel');
      else if (action === 'Open Model Setting') openSetting('modelPath', true);
      else if (action === 'Open Max Tokens Setting') openSetting('maxTokens', false);
      else if (action === 'Show Log') out.show(true);
    });
  };
}
