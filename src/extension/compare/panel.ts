// The Compare Models panel: two models' results on the same text, beside the editor. It owns both results
// (released when it closes or shows another pair) and answers the view's one-head-one-term requests.
import * as vscode from 'vscode';
import { COMPARE_PROTOCOL_VERSION, parseCompareMessage, type CompareInit, type CompareToWebview, type Side } from '../../shared/protocol/compare';
import type { ColorScaleName } from '../../shared/protocol/lens';
import { answerCompareSlice, compareInit, type SideResult } from './requests';
import { renderWebviewHtml } from '../common/webview-html';

export const COMPARE_VIEW_TYPE = 'debertaLens.compare';

export interface ComparePair {
  text: string;
  a: SideResult;
  b: SideResult;
}

export class ComparePanel {
  private panel: vscode.WebviewPanel | undefined;
  private pair: (ComparePair & { init: CompareInit }) | undefined;
  private nextPair = 1;
  private ready = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly colorScale: () => ColorScaleName,
    private readonly log: (line: string) => void,
  ) {}

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Shows a pair (creating or revealing the panel); returns what the view is told. */
  show(pair: ComparePair): CompareInit {
    this.releasePair();
    const init = compareInit(this.nextPair++, pair.text, pair.a, pair.b, this.colorScale());
    this.pair = { ...pair, init };
    // The view's first requests are for layer 0 of both sides: compute them while the page starts.
    for (const s of [pair.a, pair.b]) s.result.load(s.result.layers[0] ?? 0).catch(() => undefined);
    if (!this.panel) this.attach();
    else {
      this.panel.reveal(this.panel.viewColumn ?? vscode.ViewColumn.Beside, true);
      if (this.ready) this.post({ type: 'init', init });
    }
    return init;
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private releasePair(): void {
    if (!this.pair) return;
    this.pair.a.result.release();
    if (this.pair.b.result !== this.pair.a.result) this.pair.b.result.release();
    this.pair = undefined;
  }

  private attach(): void {
    const panel = vscode.window.createWebviewPanel(
      COMPARE_VIEW_TYPE,
      'DeBERTa Lens: Compare Models',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        enableScripts: true,
        retainContextWhenHidden: false,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
      },
    );
    this.panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.svg');
    panel.webview.html = renderCompareHtml(panel.webview, this.extensionUri);
    const own = [
      panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m)),
      panel.onDidChangeViewState((e) => {
        if (!e.webviewPanel.visible) this.ready = false; // a hidden page is torn down; it sends `ready` again
      }),
    ];
    panel.onDidDispose(() => {
      for (const d of own) d.dispose();
      this.panel = undefined;
      this.ready = false;
      this.releasePair();
    });
  }

  private receive(raw: unknown): void {
    const m = parseCompareMessage(raw);
    if (!m) {
      this.log('compare: ignored a malformed message from the view');
      return;
    }
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (m.version !== COMPARE_PROTOCOL_VERSION) this.log(`compare: view protocol ${m.version}, host ${COMPARE_PROTOCOL_VERSION}`);
        if (this.pair) this.post({ type: 'init', init: this.pair.init });
        else this.post({ type: 'empty', message: 'Run “DeBERTa Lens: Compare with Another Model…” to put two models side by side.' });
        return;
      case 'request': {
        const pair = this.pair;
        if (!pair || pair.init.pairId !== m.pairId) {
          this.post({ type: 'response', id: m.id, pairId: m.pairId, ok: false, error: 'this comparison has been replaced' });
          return;
        }
        const side: SideResult = pair[m.side satisfies Side];
        answerCompareSlice(side.result, m.body).then(
          ({ n, data }) => {
            const copy = new Float32Array(data.length);
            copy.set(data);
            this.post({ type: 'response', id: m.id, pairId: m.pairId, ok: true, n, data: copy.buffer });
          },
          (e: unknown) => this.post({ type: 'response', id: m.id, pairId: m.pairId, ok: false, error: e instanceof Error ? e.message : String(e) }),
        );
        return;
      }
      case 'log':
        this.log(`compare view ${m.level}: ${m.message}`);
        return;
    }
  }

  private post(m: CompareToWebview): void {
    void this.panel?.webview.postMessage(m);
  }
}

function renderCompareHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return renderWebviewHtml(webview, extensionUri, {
    title: 'DeBERTa Lens: Compare Models',
    styles: ['media/lens.css', 'media/compare.css'],
    script: 'dist/compare.js',
    appClass: 'compare-app',
  });
}
