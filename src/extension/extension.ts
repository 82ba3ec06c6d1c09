// VS Code entry point: wires commands, settings, the panel, the editor lens and the status bar together.
// The engine does the work; this file only moves text in and results out.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { BUNDLED_MODELS, inspectModel, isLensError, LensError, openModel } from '../engine';
import { isExportFormat, type ExportFormat, type ViewName } from '../shared/protocol/lens';
import { positionSpecOf } from './common/result-shape';
import { EditorLens } from './editor/editor-lens';
import { ModelHost } from './model/model-host';
import { LensPanel, VIEW_TYPE } from './lens/panel';
import { selectModel } from './model/select-model';
import { MODEL_KEYS, readSettings, SECTION, type LensSettings } from './common/settings';
import { errorActions, explainError, modelOpenError } from './common/messages';
import { LensStatus } from './model/status-bar';
import { ComparePanel } from './compare/panel';
import { compareModels } from './compare/command';
import { paragraphAround } from './editor/text-range';
import { PanelPredictions } from './lens/panel-predictions';
import { registerPredictions } from './editor/predict-commands';
import { exportRankingCommand } from './lens/ranking-command';

/** What `debertaLens.explain` resolves to; the integration tests read it. */
export type ExplainOutcome =
  | { ok: true; tokens: number; layers: number; heads: number; terms: string[]; ms: number; executionProvider: string }
  | { ok: false; error: string; code: string };

/** Optional argument of the explain commands (tests and keybindings may pass it). */
export interface ExplainArgs {
  /** Aborts the run after this many milliseconds, as the progress notification's Cancel button does. */
  cancelAfterMs?: number;
  view?: ViewName;
}

/** Menus pass a Uri as the first argument and keybindings may pass anything: keep only what we know. */
function explainArgs(raw: unknown): ExplainArgs {
  if (!raw || typeof raw !== 'object' || raw instanceof vscode.Uri) return {};
  const a = raw as Record<string, unknown>;
  return {
    cancelAfterMs: typeof a.cancelAfterMs === 'number' && a.cancelAfterMs >= 0 ? a.cancelAfterMs : undefined,
    view: a.view === 'heads' || a.view === 'heatmap' ? a.view : undefined,
  };
}

export function activate(context: vscode.ExtensionContext): void {
  const out = vscode.window.createOutputChannel('DeBERTa Lens');
  const log = (line: string) => out.appendLine(`[${new Date().toISOString()}] ${line}`);
  // The default is always listed (a missing one is reported when it opens); another bundled model only when installed.
  const bundled = BUNDLED_MODELS.map((model) => ({ model, dir: path.join(context.extensionPath, 'models', model.folder) })).filter(
    (b, k) => k === 0 || fs.existsSync(path.join(b.dir, 'config.json')),
  );
  const defaultDir = bundled[0].dir;
  const bundledDirs = new Map(bundled.map((b) => [b.model.name, b.dir]));
  const settings = (): LensSettings => {
    const cfg = vscode.workspace.getConfiguration(SECTION);
    return readSettings((k) => cfg.get(k));
  };
  const models = new ModelHost(openModel, defaultDir, log, bundledDirs);
  const status = new LensStatus();

  // A machine-overridable setting (the model folder is a path on the machine that runs the model) is listed
  // under the Remote tab in a Remote window, under User locally: open the tab where it takes effect.
  const openSetting = (key: string, machine: boolean) => {
    const query = `@id:${SECTION}.${key}`;
    const remote = machine && vscode.env.remoteName !== undefined;
    const local = () => vscode.commands.executeCommand('workbench.action.openSettings', query);
    if (remote) void vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query }).then(undefined, local);
    else void local();
  };

  const showError = (e: unknown) => {
    const message = isLensError(e) ? e.message : `DeBERTa Lens failed: ${e instanceof Error ? e.message : String(e)}`;
    log(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    void vscode.window.showErrorMessage(message, ...errorActions(e)).then((action) => {
      if (action === 'Select Model…') void vscode.commands.executeCommand('debertaLens.selectModel');
      else if (action === 'Open Model Setting') openSetting('modelPath', true);
      else if (action === 'Open Max Tokens Setting') openSetting('maxTokens', false);
      else if (action === 'Show Log') out.show(true);
    });
  };

  /** The explain in flight, if any (one at a time per window). */
  let running: AbortController | undefined;
  const panel = new LensPanel(
    context.extensionUri,
    () => {
      const s = settings();
      return { term: s.defaultTerm, view: s.defaultView, colorScale: s.colorScale };
    },
    {
      onHover: (id, h) => lens.fromPanel(id, h),
      onInit: (id) => predictions.resend(id),
      onPredictToken: (id, i) => void predictions.predictToken(id, i),
      onRun: (result, id) => {
        lens.retarget(result, id);
        void predictions.follow(result, id);
      },
      // Closing the panel while a run is in flight cancels it: the panel must not come back on its own.
      onDispose: () => {
        lens.detach();
        predictions.clear();
        running?.abort();
      },
      log,
    },
  );
  const lens = new EditorLens((i) => panel.focusToken(i));
  const predictions = new PanelPredictions({ post: (m) => panel.send(m), topK: () => settings().predictionTopK, log });
  // Compare with Another Model: its own panel and its own second model (freed with the window).
  const compare = new ComparePanel(context.extensionUri, () => settings().colorScale, log);
  const otherModel = new ModelHost(openModel, defaultDir, log, bundledDirs);

  const explain = async (raw?: unknown): Promise<ExplainOutcome> => {
    try {
      return await runExplain(explainArgs(raw));
    } catch (e) {
      if (isLensError(e) && e.code === 'cancelled') {
        log('explain cancelled');
        status.idle('cancelled');
      } else {
        showError(e);
        status.idle('last run failed');
      }
      return { ok: false, error: e instanceof Error ? e.message : String(e), code: isLensError(e) ? e.code : 'runtime' };
    }
  };

  const pickDeps = () => ({ context, defaultDir, bundled, currentDir: () => models.modelDir(settings()), inspect: (dir: string) => inspectModel(dir), log, showError });

  const runExplain = async (args: ExplainArgs): Promise<ExplainOutcome> => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new LensError('Open a text editor and select the text to explain (DeBERTa Lens: Explain Attention).');
    const doc = editor.document;
    let range: vscode.Range = editor.selection;
    if (editor.selection.isEmpty) {
      const lines = Array.from({ length: doc.lineCount }, (_, k) => doc.lineAt(k).text);
      const p = paragraphAround(lines, editor.selection.active.line);
      range = new vscode.Range(p.start, 0, p.end, doc.lineAt(p.end).text.length);
    }
    const text = doc.getText(range);
    if (!text.trim()) throw new LensError('Nothing to explain: select some text, or put the cursor on a non-empty line.');
    const s = settings();
    const version = doc.version;
    const base = doc.offsetAt(range.start);

    const controller = new AbortController();
    running = controller;
    const run = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'DeBERTa Lens', cancellable: true },
      async (progress, token) => {
        token.onCancellationRequested(() => controller.abort());
        if (args.cancelAfterMs !== undefined) setTimeout(() => controller.abort(), args.cancelAfterMs);
        const cancelled = () => new LensError('Explain was cancelled.', 'cancelled');
        if (!models.matches(s)) {
          progress.report({ message: `loading ${path.basename(models.modelDir(s))}…` });
          status.busy('loading the model');
        }
        const model = await models.get(s).catch((e: unknown) => {
          throw modelOpenError(e, s.modelPath);
        });
        if (controller.signal.aborted) throw cancelled();
        progress.report({ message: `explaining ${text.length} characters…` });
        status.busy('explaining');
        const t0 = performance.now();
        // The head the first heatmap shows comes with the forward pass: the panel opens without waiting for its layer.
        const result = await model.explain({ text, preview: panel.previewFor(model.info, args.view) }, controller.signal).catch((e: unknown) => {
          throw explainError(e, s.maxTokens);
        });
        // The engine may finish just as the user cancels: a cancelled run shows nothing.
        if (controller.signal.aborted) throw cancelled();
        return { model, result, ms: result.timings?.total_ms ?? performance.now() - t0 };
      },
    );
    const { result, ms, model } = run;
    if (running === controller) running = undefined;
    const ep = result.model.execution_provider;
    log(`explained ${result.n} tokens with ${result.model.name} on ${ep} in ${ms.toFixed(1)} ms`);
    status.ready(result.model.name, ep, ms);
    const id = panel.show({ result, text, ms, positions: positionSpecOf(model.summary), model }, args.view);
    // After the panel has its result: the heads run on the explain's hidden state while the first heatmap loads.
    void predictions.start(model, result, id);
    lens.attach(
      { document: doc, version, base, result, resultId: id },
      { layer: result.layers[0] ?? 0, head: 0, kind: result.has(s.defaultTerm) ? s.defaultTerm : 'probs' },
    );
    return {
      ok: true,
      tokens: result.n,
      layers: result.layers.length,
      heads: result.heads,
      terms: result.terms,
      ms,
      executionProvider: ep,
    };
  };

  /**
   * `debertaLens.export` with `{ format, path? }` (tests and keybindings pass a path; without one a save dialog
   * asks). Without a format a quick pick asks. Resolves to `{ ok, path }` or `{ ok: false, error }`.
   */
  const exportCommand = async (raw?: unknown): Promise<{ ok: true; path: string } | { ok: false; error: string }> => {
    const a = raw && typeof raw === 'object' && !(raw instanceof vscode.Uri) ? (raw as Record<string, unknown>) : {};
    try {
      let format: ExportFormat | undefined = isExportFormat(a.format) ? a.format : undefined;
      if (a.format !== undefined && !format) throw new LensError(`Export: unknown format ${JSON.stringify(a.format)}; use png, svg, npz, json or html.`);
      if (!format) {
        const pick = await vscode.window.showQuickPick(
          [
            { label: 'png', description: 'the current view as an image' },
            { label: 'svg', description: 'the current heatmap as vector cells' },
            { label: 'npz', description: 'every layer and term, for NumPy' },
            { label: 'json', description: 'every layer and term, as the CLI writes it' },
            { label: 'html', description: 'a self-contained report that opens offline' },
          ],
          { placeHolder: 'Export the DeBERTa Lens result as…' },
        );
        if (!pick) return { ok: false, error: 'cancelled' };
        format = pick.label as ExportFormat;
      }
      const target = typeof a.path === 'string' && a.path ? path.resolve(a.path) : undefined;
      const file = await panel.exportCurrent(format, target);
      if (!file) return { ok: false, error: 'cancelled' };
      if (!target) void vscode.window.showInformationMessage(`DeBERTa Lens: exported ${format.toUpperCase()} to ${file}`);
      return { ok: true, path: file };
    } catch (e) {
      showError(e);
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  };

  context.subscriptions.push(
    out,
    status,
    lens,
    { dispose: () => panel.dispose() },
    { dispose: () => void models.dispose() },
    vscode.commands.registerCommand('debertaLens.explain', (args?: unknown) => explain(args)),
    vscode.commands.registerCommand('debertaLens.compareHeads', async (args?: unknown) => {
      if (panel.result && panel.isOpen) {
        panel.showView('heads');
        return undefined;
      }
      return explain({ ...explainArgs(args), view: 'heads' });
    }),
    vscode.commands.registerCommand('debertaLens.export', (args?: unknown) => exportCommand(args)),
    vscode.commands.registerCommand('debertaLens.exportRanking', (args?: unknown) => exportRankingCommand(panel, args, showError)),
    ...registerPredictions({ panel, lens, predictions, showError }),
    { dispose: () => compare.dispose() },
    { dispose: () => void otherModel.dispose() },
    vscode.commands.registerCommand('debertaLens.compareModels', (args?: unknown) =>
      compareModels(
        {
          pick: pickDeps(),
          settings,
          models,
          other: otherModel,
          currentText: () => (panel.isOpen ? panel.text : undefined),
          explain: async () => (await explain()).ok,
          panel: compare,
          log,
          showError,
        },
        args,
      ),
    ),
    vscode.commands.registerCommand('debertaLens.selectModel', () =>
      selectModel(pickDeps()),
    ),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SECTION}.predictionTopK`)) void predictions.refresh();
      if (MODEL_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        // The next Explain reopens with the new settings; the old model's memory is freed now.
        void models.dispose();
        void otherModel.dispose();
        status.idle(`${path.basename(models.modelDir(settings()))} (not loaded)`);
      }
    }),
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      async deserializeWebviewPanel(webviewPanel: vscode.WebviewPanel) {
        panel.restore(webviewPanel);
      },
    }),
  );
  log(`activated; default model folder ${defaultDir}`);
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
