// The head atlas panel: one atlas (or two side by side) of every head's metrics over a folder. It keeps the atlases
// it shows and opens a clicked top example in the editor (and, through `openExample`, in the lens panel).
import * as vscode from 'vscode';
import { saveFigure } from '../common/save-figure';
import type { AtlasJson } from '../../analysis/atlas/atlas';
import {
  ATLAS_PROTOCOL_VERSION,
  parseAtlasMessage,
  type AtlasExportMessage,
  type AtlasOpenMessage,
  type AtlasToWebview,
  type AtlasView,
} from '../../shared/atlas';
import { renderWebviewHtml } from '../common/webview-html';
import { atlasView } from './atlas-file';

export const ATLAS_VIEW_TYPE = 'debertaLens.atlas';

export interface AtlasPanelDeps {
  log(line: string): void;
  /** A top example clicked in the view: the atlas it belongs to and the example. */
  openExample(atlas: AtlasJson, m: AtlasOpenMessage): Promise<void>;
}

export class AtlasPanel {
  private panel: vscode.WebviewPanel | undefined;
  private shown: { atlas: AtlasJson; view: AtlasView }[] = [];
  private ready = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly d: AtlasPanelDeps,
  ) {}

  get count(): number {
    return this.panel ? this.shown.length : 0;
  }

  /** Shows `atlas` alone, or beside the one on screen (`beside`): the view pairs them head by head. */
  show(file: string, atlas: AtlasJson, beside = false): AtlasView[] {
    const entry = { atlas, view: atlasView(file, atlas) };
    this.shown = beside && this.panel && this.shown.length > 0 ? [this.shown[0]!, entry] : [entry];
    if (!this.panel) this.attach();
    else {
      this.panel.reveal(undefined, true);
      if (this.ready) this.post({ type: 'init', atlases: this.shown.map((s) => s.view) });
    }
    return this.shown.map((s) => s.view);
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private attach(): void {
    const panel = vscode.window.createWebviewPanel(
      ATLAS_VIEW_TYPE,
      'DeBERTa Lens: Head Atlas',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
      },
    );
    this.panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.svg');
    panel.webview.html = renderWebviewHtml(panel.webview, this.extensionUri, {
      title: 'DeBERTa Lens: Head Atlas',
      styles: ['media/lens.css', 'media/atlas.css'],
      script: 'dist/atlas.js',
      appClass: 'atlas-app',
    });
    const own = panel.webview.onDidReceiveMessage((m: unknown) => this.receive(m));
    panel.onDidDispose(() => {
      own.dispose();
      this.panel = undefined;
      this.ready = false;
      this.shown = [];
    });
  }

  private receive(raw: unknown): void {
    const m = parseAtlasMessage(raw);
    if (!m) return this.d.log('atlas: ignored a malformed message from the view');
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (m.version !== ATLAS_PROTOCOL_VERSION) this.d.log(`atlas: view protocol ${m.version}, host ${ATLAS_PROTOCOL_VERSION}`);
        if (this.shown.length) this.post({ type: 'init', atlases: this.shown.map((s) => s.view) });
        else this.post({ type: 'empty', message: 'Run “DeBERTa Lens: Build Head Atlas for Folder…” or “Open Head Atlas…”.' });
        return;
      case 'log':
        this.d.log(`atlas view ${m.level}: ${m.message}`);
        return;
      case 'open': {
        const s = this.shown[m.atlas];
        if (s) void this.d.openExample(s.atlas, m);
        return;
      }
      case 'export':
        void this.saveFigure(m);
        return;
    }
  }

  /** The scatter as a figure, where the user says (the save dialog); one line when it cannot be written. */
  private saveFigure(m: AtlasExportMessage): Promise<void> {
    return saveFigure(m, (line) => this.d.log(line), 'atlas');
  }

  private post(m: AtlasToWebview): void {
    void this.panel?.webview.postMessage(m);
  }
}
