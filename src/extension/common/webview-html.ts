// The HTML shell both webview panels load: a strict CSP (scripts only by nonce), their stylesheets and one bundle.
import * as vscode from 'vscode';

function nonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let k = 0; k < 32; k++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

export interface WebviewShell {
  title: string;
  /** Paths under the extension, e.g. `media/lens.css`, linked in this order. */
  styles: readonly string[];
  /** The bundle, e.g. `dist/webview.js`. */
  script: string;
  /** Extra class on `#app`, if any. */
  appClass?: string;
  /** Image sources besides the webview's own and `data:` (the main panel also draws from `blob:`). */
  extraImgSrc?: string;
}

export function renderWebviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, shell: WebviewShell): string {
  const n = nonce();
  const uri = (p: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p.split('/'))).toString();
  const csp = [
    `default-src 'none'`,
    `img-src ${webview.cspSource} data:${shell.extraImgSrc ? ` ${shell.extraImgSrc}` : ''}`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${n}'`,
  ].join('; ');
  const links = shell.styles.map((s) => `<link rel="stylesheet" href="${uri(s)}">\n`).join('');
  const cls = shell.appClass ? ` class="${shell.appClass}"` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${links}<title>${shell.title}</title>
</head>
<body>
<div id="app"${cls} data-state="loading"><p id="empty" class="empty">Loading…</p></div>
<script nonce="${n}" src="${uri(shell.script)}"></script>
</body>
</html>`;
}
