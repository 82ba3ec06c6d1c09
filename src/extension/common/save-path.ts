// VS Code's save dialog as every export opens it: in the first workspace folder, with a name filled in.
import * as vscode from 'vscode';

/** The save dialog, opening in the first workspace folder with `name` filled in; the chosen path or undefined. */
export async function askSavePath(name: string, filters: Record<string, string[]>, saveLabel: string): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const uri = await vscode.window.showSaveDialog({
    defaultUri: folder ? vscode.Uri.joinPath(folder, name) : vscode.Uri.file(name),
    filters,
    saveLabel,
  });
  return uri?.fsPath;
}
