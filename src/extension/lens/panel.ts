// The one DeBERTa Lens webview panel: created on the first Explain, reused by the next ones, restored after
// a reload by its serializer. It keeps the ExplainResult on the host and answers the view's slice requests.
import type { DecisionTarget } from '../../shared/decision';
import type { OcclusionMerge } from '../../shared/occlusion';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { type ExplainResult, isLensError, LensError, type LensModel, type ModelInfo } from '../../engine';
import type { PositionSpec } from '../../analysis';
import {
  imageAsking,
  lensAnswering,
  parseWebviewMessage,
  type ExportFormat,
  type ExportMessage,
  type FigureSize,
  type HostToWebview,
  type HoverInfo,
  type RequestBody,
  type ResponseBody,
  type ViewDefaults,
  type ViewInit,
  type ViewName,
} from '../../shared/protocol/lens';
import { MessageHandler } from '../../shared/messaging/message-handler';
import { answerRequest, layerOf, prefetchAround, type AnswerContext } from './request-dispatch';
import { emdShapeOf, emdViewOf } from './emd-passes';
import { protocolTokens } from '../common/result-shape';
import { writeExport } from './export-files';
import { askExportPath, askRankingPath, askViewImage } from './save-dialogs';
import { reportPlan } from '../../analysis/export/html-report';
import { firstSlice, loadFirstLayer, previewAsk, type LayerPreviewAsk, type ViewAt } from './first-slice';
import { parseRunMessage, type RunLabel } from '../../shared/interventions';
import { RunHost } from './interventions';
import { renderWebviewHtml } from '../common/webview-html';
import { trackInNotification } from '../common/work-notification';

export const VIEW_TYPE = 'debertaLens.view';

export interface PanelResult {
  result: ExplainResult;
  text: string;
  ms: number;
  /** The model's relative-position geometry (the bucket lens needs it). */
  positions?: PositionSpec;
  /** The model that made the result (the Intervention and Head ranking tabs run it). */
  model?: LensModel;
  /** Set when the result is an intervened run of the same text (not a plain explain). */
  run?: RunLabel;
  /** Opens at this layer and head with this token row pinned (the head atlas's examples). */
  openAt?: { layer: number; head: number; row: number | null };
}

export interface PanelEvents {
  onHover(resultId: number, hover: HoverInfo): void;
  /** The view showed result `resultId` (again, after a reload): extras it needs besides init are sent now. */
  onInit?(resultId: number): void;
  /** The view asked what the model would put at token `i`. */
  onPredictToken?(resultId: number, i: number): void;
  /** The view asked which tokens made the decision (`target`), or to stop asking. */
  onOcclude?(resultId: number, target: DecisionTarget | null, merge?: OcclusionMerge): void;
  /** A multiple-choice card's Show: explain the prompt with choice `index`. */
  onShowChoice?(resultId: number, index: number): void;
  /** What the JSON export adds for result `resultId`: the decision and the occlusion scores the panel shows. */
  exportExtras?(resultId: number): Record<string, unknown>;
  onDispose(): void;
  /** Another run of the same text is shown (the editor's decorations follow it). */
  onRun?(result: ExplainResult, resultId: number): void;
  log(line: string): void;
}

export class LensPanel {
  private panel: vscode.WebviewPanel | undefined;
  private current: (PanelResult & { id: number }) | undefined;
  /** The result shown before `current` (the Diff view: current − previous). */
  private previous: ExplainResult | undefined;
  private nextId = 1;
  private pendingView: ViewName | undefined;
  private ready = false;
  /** The host's own requests of the view: its current picture (the export command). */
  private readonly images = new MessageHandler({ post: (m: HostToWebview) => this.post(m), asks: imageAsking });
  /** The layer, head and term the view showed last (from its hover messages): the next init's first matrix. */
  private viewAt: ViewAt | undefined;
  /** Why the last explain failed, while the panel still shows the result before it (sent again after a reload). */
  private failed: string | undefined;
  /** The plain explain behind an intervened run on screen (the Diff compares with it; "back" shows it). */
  private plain: PanelResult | undefined;
  /** The line to the view: its matrix requests are answered here, the rest of what it sends goes to `receive`. */
  private readonly messages = new MessageHandler({
    post: (m: HostToWebview) => void this.panel?.webview.postMessage(m),
    answers: lensAnswering,
    answer: (body, { resultId }) => this.answer(body, resultId),
  });
  /** Interventions, head-ranking sweeps and intervened runs of the explained text. */
  readonly runs = new RunHost({
    current: () => this.current,
    plain: () => this.plain?.result,
    show: (result, run, previous) => {
      if (this.plain) this.events.onRun?.(result, this.show({ ...this.plain, result, run }, undefined, previous));
    },
    post: (m) => void this.panel?.webview.postMessage(m),
    save: async (format, content, target, stem) => {
      const file = target ?? (await askRankingPath(format, stem));
      if (file) await fs.promises.writeFile(file, content);
      return file;
    },
    log: (line) => this.events.log(line),
    track: trackInNotification,
  });

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly defaults: () => ViewDefaults,
    private readonly events: PanelEvents,
  ) {}

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  get resultId(): number | undefined {
    return this.current?.id;
  }

  /** The model that made the result shown (occlusion runs it again). */
  get model(): LensModel | undefined {
    return this.current?.model;
  }

  get result(): ExplainResult | undefined {
    return this.current?.result;
  }

  /** The text of the result shown (Compare with Another Model runs the second model on it). */
  get text(): string | undefined {
    return this.current?.text;
  }

  /** The layer and head the view last showed (it reports them after every render), while it shows a result. */
  get at(): { layer: number; head: number } | undefined {
    return this.current && this.viewAt ? { layer: this.viewAt.layer, head: this.viewAt.head } : undefined;
  }

  /** What the model read for the result shown: one text, or a sentence pair and where its second text starts. */
  get input(): { text: string; pair?: string; pairOffset?: number } | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    const r = cur.result;
    return r.pair !== undefined && r.text !== undefined ? { text: r.text, pair: r.pair, pairOffset: r.pairOffset } : { text: cur.text };
  }

  /** Shows a new result (creating or revealing the panel); returns its id. `previous`: what the Diff compares with. */
  show(r: PanelResult, view?: ViewName, previous?: ExplainResult): number {
    const id = this.nextId++;
    if (!r.run) this.plain = r;
    if (previous) {
      // An intervened run and the plain one it differs from: every other result is freed.
      for (const old of [this.previous, this.current?.result]) if (old && old !== previous && old !== r.result) old.release();
      this.previous = previous;
    } else if (this.current && this.current.result !== r.result) {
      // Two results stay readable (current, and previous for the Diff view); the one before frees its outputs.
      const dropped = this.previous;
      this.previous = this.current.result;
      if (dropped && dropped !== this.previous && dropped !== r.result) dropped.release();
    }
    this.current = { ...r, id };
    this.failed = undefined;
    this.pendingView = view;
    loadFirstLayer(r.result, this.ready);
    if (!this.panel) this.attach(this.create());
    else {
      this.panel.reveal(this.panel.viewColumn ?? vscode.ViewColumn.Beside, true);
      if (this.ready) this.sendInit();
    }
    return id;
  }

  /**
   * What explain computes with its forward pass for this model's next result: the head its first heatmap shows
   * and the next one, which the view fetches ahead right after that paint. Both then come without a layer run,
   * which starts with the view's later requests instead of taking the cores while the page paints.
   */
  previewFor(
    info: Pick<ModelInfo, 'type' | 'layers' | 'heads' | 'terms'>,
    view?: ViewName,
    /** Where the result will open instead of where the view was (a head atlas example). */
    openAt?: { layer: number; head: number },
  ): LayerPreviewAsk | undefined {
    const defaults = this.defaults();
    const at = openAt ? { ...openAt, kind: defaults.term } : this.viewAt;
    return previewAsk(info, at, { ...defaults, ...(view ? { view } : {}) });
  }

  /** Opens a view (heatmap or heads) in the panel that shows the current result. */
  showView(view: ViewName): void {
    if (!this.panel) return;
    this.panel.reveal(undefined, false);
    if (this.ready) this.post({ type: 'show', view });
    else this.pendingView = view;
  }

  /** A message for the view that is loaded now (dropped otherwise: `onInit` follows the next load). */
  send(m: HostToWebview): void {
    if (this.ready) this.post(m);
  }

  /** An explain failed or was refused: the open panel marks what it shows as the previous result. */
  markFailed(message: string): void {
    if (!this.panel) return;
    this.failed = message;
    if (this.ready) this.post({ type: 'stale', message });
  }

  /** Brings the panel to the front without taking the focus. */
  reveal(): void {
    this.panel?.reveal(undefined, true);
  }

  /** Editor cursor moved onto token `i` (or off every token). */
  focusToken(i: number | null): void {
    if (this.current && this.ready) this.post({ type: 'focus', resultId: this.current.id, i });
  }

  /**
   * Writes an export of the current result to `target` (tests, scripts) or to a path from the save dialog.
   * PNG and SVG are drawn by the view, so they need the panel open. Resolves to the path written, or
   * undefined when the user cancelled the dialog.
   */
  async exportCurrent(format: ExportFormat, target?: string, image?: ExportMessage, size: FigureSize = {}): Promise<string | undefined> {
    const cur = this.current;
    if (!cur) throw new LensError('Nothing to export: run “DeBERTa Lens: Explain Attention” first.');
    let payload = image;
    if ((format === 'png' || format === 'svg') && !payload) payload = await this.requestImage(format, size);
    // The report's choice is checked before the save dialog: a refusal never comes after picking a file.
    const report = format === 'html' ? reportPlan(cur.result, { layers: image?.layers, kinds: image?.kinds }) : {};
    const file = target ?? (await askExportPath(format, cur.result, payload?.name));
    if (!file) return undefined;
    await writeExport(cur.result, format, file, payload ?? {}, report, this.events.exportExtras?.(cur.id) ?? {});
    this.events.log(`exported ${format} to ${file}`);
    return file;
  }

  /** Asks the view for its current picture; fails after a while if the view is hidden or gone. */
  private requestImage(format: 'png' | 'svg', size: FigureSize): Promise<ExportMessage> {
    if (!this.panel || !this.ready) {
      return Promise.reject(new LensError(`Export ${format.toUpperCase()}: show the DeBERTa Lens panel first (the view draws the image).`));
    }
    return askViewImage(this.images, format, size);
  }

  /** Called by the serializer after a window reload: the result is gone, the view's own state is not. */
  restore(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.attach(panel);
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private create(): vscode.WebviewPanel {
    return vscode.window.createWebviewPanel(
      VIEW_TYPE,
      'DeBERTa Lens',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      this.options(),
    );
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false, // state lives in getState/setState; hidden panels cost nothing
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    this.ready = false;
    panel.webview.options = this.options();
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.svg');
    panel.webview.html = renderHtml(panel.webview, this.extensionUri);
    const own = [
      panel.webview.onDidReceiveMessage((m: unknown) => {
        if (this.panel === panel) this.receive(m);
      }),
      panel.onDidChangeViewState((e) => {
        // A hidden panel's page is torn down; it sends `ready` again when shown.
        if (this.panel === panel && !e.webviewPanel.visible) this.ready = false;
      }),
    ];
    panel.onDidDispose(() => {
      for (const d of own) d.dispose();
      if (this.panel !== panel) return; // an older panel replaced by restore()
      this.panel = undefined;
      // Free the results' kept states and computed layers with the view.
      this.current?.result.release();
      this.previous?.release();
      this.current = undefined;
      this.previous = undefined;
      this.plain = undefined;
      this.failed = undefined;
      this.runs.cancelAll();
      this.ready = false;
      this.events.onDispose();
    });
  }

  private receive(raw: unknown): void {
    const run = parseRunMessage(raw);
    if (run) return void this.runs.handle(run);
    const m = parseWebviewMessage(raw);
    if (!m) {
      this.events.log(`ignored a malformed message from the view`);
      return;
    }
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (this.current) this.sendInit();
        else this.post({ type: 'empty', message: 'Select text in an editor and run “DeBERTa Lens: Explain Attention” (Ctrl+Alt+E).' });
        if (!this.current && this.failed) this.post({ type: 'stale', message: this.failed });
        return;
      case 'request':
        this.messages.receive(m);
        return;
      case 'hover':
        this.viewAt = { layer: m.hover.layer, head: m.hover.head, kind: m.hover.kind };
        if (this.current && m.resultId === this.current.id) this.events.onHover(m.resultId, m.hover);
        return;
      case 'log':
        this.events.log(`view ${m.level}: ${m.message}`);
        return;
      case 'predictToken':
        if (this.current && m.resultId === this.current.id) this.events.onPredictToken?.(m.resultId, m.i);
        return;
      case 'occlude':
      case 'cancelOcclusion':
        if (this.current && m.resultId === this.current.id)
          this.events.onOcclude?.(m.resultId, m.type === 'occlude' ? m.target : null, m.type === 'occlude' ? m.merge : undefined);
        return;
      case 'showChoice':
        if (this.current && m.resultId === this.current.id) this.events.onShowChoice?.(m.resultId, m.index);
        return;
      case 'compareModels':
        void vscode.commands.executeCommand(
          'debertaLens.compareModels',
          m.layer !== undefined && m.head !== undefined ? { startAt: { layer: m.layer, head: m.head } } : undefined,
        );
        return;
      case 'export': {
        // The picture the export command asked for; anything else is the view's own Export button.
        if (this.images.receive(m)) return;
        // A button in the view: ask where to save, then write.
        this.exportCurrent(m.format, undefined, m.format === 'npz' || m.format === 'json' ? undefined : m).then(
          (file) => {
            if (file) void vscode.window.showInformationMessage(`DeBERTa Lens: exported ${m.format.toUpperCase()} to ${file}`);
          },
          (e: unknown) => {
            this.events.log(`export failed: ${e instanceof Error ? e.message : String(e)}`);
            void vscode.window.showErrorMessage(
              isLensError(e) ? e.message : `DeBERTa Lens export failed: ${e instanceof Error ? e.message : String(e)}`,
            );
          },
        );
        return;
      }
    }
  }

  private sendInit(): void {
    const cur = this.current;
    if (!cur) return;
    const r = cur.result;
    const defaults = this.defaults();
    if (this.pendingView) defaults.view = this.pendingView;
    this.pendingView = undefined;
    const emd = this.emdOf(cur);
    const init: ViewInit = {
      resultId: cur.id,
      text: cur.text,
      tokens: protocolTokens(r, cur.text),
      model: {
        name: r.model.name,
        type: r.model.type,
        layers: r.layers,
        heads: r.heads,
        headDim: r.model.head_dim,
        terms: r.terms,
        executionProvider: r.model.execution_provider,
        scale: r.scale,
        ...(emd ? { emd: emd.shape } : {}),
      },
      defaults,
      ms: cur.ms,
      ...(cur.run ? { run: cur.run } : {}),
      ...(cur.openAt ? { openAt: cur.openAt } : {}),
    };
    const ready = this.panel;
    const at = cur.openAt ? { layer: cur.openAt.layer, head: cur.openAt.head, kind: defaults.term } : this.viewAt;
    void firstSlice(r, at, defaults).then((first) => {
      // A newer result, or a page torn down meanwhile, sends its own init.
      if (this.current !== cur || this.panel !== ready || !this.ready) return;
      this.post({ type: 'init', init: first ? { ...init, first } : init });
      if (defaults.view === 'heads') this.post({ type: 'show', view: 'heads' });
      if (this.failed) this.post({ type: 'stale', message: this.failed });
      // After the init: what the view gets for this result besides it (predictions) must find it in place.
      this.events.onInit?.(cur.id);
    });
  }

  /**
   * One matrix request of the view, for result `resultId`. A layer that is not computed yet is computed now (a
   * one-layer run); the answer comes when it is done, and the layer the reader goes to next is computed after it.
   */
  private async answer(body: RequestBody, resultId: number): Promise<ResponseBody> {
    const cur = this.current;
    if (!cur || cur.id !== resultId) throw new Error('this result has been replaced');
    const emd = this.emdOf(cur);
    const reply = await answerRequest(cur.result, body, { positions: cur.positions, previous: this.previous, ...(emd ? { emd } : {}) });
    const layer = layerOf(body);
    // After the reply is posted: the prefetch must not delay it (the EMD's passes are computed whole, no prefetch).
    if (layer !== undefined && !emd?.layers.includes(layer)) setTimeout(() => prefetchAround(cur.result, layer), 0);
    return reply;
  }

  /** The Enhanced Mask Decoder's passes of a plain explain whose model has them (an intervened run shows none: the
   *  passes would be the plain model's, not the run's). */
  private emdOf(cur: PanelResult): (AnswerContext['emd'] & { shape: NonNullable<ViewInit['model']['emd']> }) | undefined {
    const model = cur.model;
    const shape = model && !cur.run ? emdShapeOf(model.summary, cur.result.n) : undefined;
    if (!model || !shape) return undefined;
    return { shape, layers: shape.layers, view: () => emdViewOf(model, cur.result, shape) };
  }

  private post(m: HostToWebview): void {
    this.messages.send(m);
  }
}

function renderHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return renderWebviewHtml(webview, extensionUri, {
    title: 'DeBERTa Lens',
    styles: ['media/lens.css', 'media/lens-views.css', 'media/lens-runs.css', 'media/lens-decision.css'],
    script: 'dist/webview.js',
    extraImgSrc: 'blob:',
  });
}
