// The Compare Models panel: two models' results on the same text, beside the editor. It owns both results
// (released when it closes or shows another pair) and answers the view's one-head-one-term requests.
import * as vscode from 'vscode';
import { saveFigure } from '../common/save-figure';
import { MessageHandler } from '../../shared/messaging/message-handler';
import {
  compareAnswering,
  COMPARE_PROTOCOL_VERSION,
  parseCompareMessage,
  type CompareExportMessage,
  type CompareInit,
  type CompareScope,
  type CompareSlice,
  type CompareSliceRequest,
  type CompareToWebview,
} from '../../shared/protocol/compare';
import type { ColorScaleName } from '../../shared/protocol/lens-names';
import { toBuffer } from '../../shared/protocol/matrix-buffer';
import { answerCompareSlice, compareInit, type SideResult } from './requests';
import { renderWebviewHtml } from '../common/webview-html';

export const COMPARE_VIEW_TYPE = 'debertaLens.compare';

export interface ComparePair {
  text: string;
  a: SideResult;
  b: SideResult;
  /** Where both sides start (the main panel's layer and head), where they have it. */
  start?: { layer: number; head: number };
}

export class ComparePanel {
  private panel: vscode.WebviewPanel | undefined;
  private pair: (ComparePair & { init: CompareInit }) | undefined;
  private nextPair = 1;
  /** Why the last comparison failed, while the panel still shows the pair before it. */
  private failed: string | undefined;
  private ready = false;
  /** The line to the view: its slice requests are answered here, the rest of what it sends goes to `receive`. */
  private readonly messages = new MessageHandler({
    post: (m: CompareToWebview) => void this.panel?.webview.postMessage(m),
    answers: compareAnswering,
    answer: (body, scope) => this.answer(body, scope),
  });

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
    if (pair.start) init.start = pair.start;
    this.pair = { ...pair, init };
    this.failed = undefined;
    // The view's first requests are for its starting layer on both sides: compute them while the page starts.
    for (const s of [pair.a, pair.b]) {
      const layer = pair.start && s.result.layers.includes(pair.start.layer) ? pair.start.layer : (s.result.layers[0] ?? 0);
      s.result.load(layer).catch(() => undefined);
    }
    if (!this.panel) this.attach();
    else {
      this.panel.reveal(this.panel.viewColumn ?? vscode.ViewColumn.Beside, true);
      if (this.ready) this.post({ type: 'init', init });
    }
    return init;
  }

  /** A comparison failed or was refused: an open panel marks its pair as the previous one. */
  markFailed(message: string): void {
    if (!this.panel) return;
    this.failed = message;
    if (this.ready) this.post({ type: 'stale', message });
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
      // In the main panel's group (a tab beside it) rather than a third, narrow column.
      { viewColumn: lensColumn() ?? vscode.ViewColumn.Beside, preserveFocus: true },
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
      this.failed = undefined;
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
        if (this.failed) this.post({ type: 'stale', message: this.failed });
        return;
      case 'request':
        this.messages.receive(m);
        return;
      case 'log':
        this.log(`compare view ${m.level}: ${m.message}`);
        return;
      case 'export':
        void this.saveFigure(m);
        return;
    }
  }

  /** Both sides as one figure, where the user says (the save dialog); one line when it cannot be written. */
  private saveFigure(m: CompareExportMessage): Promise<void> {
    return saveFigure(m, (line) => this.log(line), 'compare');
  }

  /** One head's matrix of one term on one side, for pair `pairId`: exactly its values, copied out of the tensor. */
  private async answer(body: CompareSliceRequest, { pairId, side }: CompareScope): Promise<CompareSlice> {
    const pair = this.pair;
    if (!pair || pair.init.pairId !== pairId) throw new Error('this comparison has been replaced');
    const { n, data } = await answerCompareSlice(pair[side].result, body);
    return { n, data: toBuffer(data) };
  }

  private post(m: CompareToWebview): void {
    this.messages.send(m);
  }
}

/** The main panel's view type (lens/panel.ts; features do not import each other). */
const LENS_VIEW_TYPE = 'debertaLens.view';

/** The editor group that shows the main DeBERTa Lens panel, if one does. */
function lensColumn(): vscode.ViewColumn | undefined {
  for (const g of vscode.window.tabGroups.all)
    for (const t of g.tabs) if (t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith(LENS_VIEW_TYPE)) return g.viewColumn;
  return undefined;
}

function renderCompareHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return renderWebviewHtml(webview, extensionUri, {
    title: 'DeBERTa Lens: Compare Models',
    styles: ['media/lens.css', 'media/lens-views.css', 'media/lens-runs.css', 'media/compare.css'],
    script: 'dist/compare.js',
    appClass: 'compare-app',
  });
}
