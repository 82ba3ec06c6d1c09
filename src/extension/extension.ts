// VS Code entry point: creates the services and registers the commands; each command lives next to its feature.
// The engine does the work; the extension only moves text in and results out.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { inspectModel, openModel } from '../engine';
import { buildAtlasCommand, openAtlasCommand, openAtlasExample, type AtlasDeps } from './atlas/command';
import { AtlasPanel } from './atlas/panel';
import { errorReporter } from './common/error-report';
import { trackInNotification } from './common/work-notification';
import { RateBook } from './common/work-progress';
import { MODEL_KEYS, readSettings, SECTION, type LensSettings } from './common/settings';
import { compareModels } from './compare/command';
import { ComparePanel } from './compare/panel';
import { EditorLens } from './lens/editor-lens';
import { registerPredictions } from './lens/predict-commands';
import { ExplainCommand } from './explain-command';
import { exportCommand } from './lens/export-command';
import { LensPanel, VIEW_TYPE } from './lens/panel';
import { PanelOcclusion } from './lens/panel-occlusion';
import { PanelPredictions } from './lens/panel-predictions';
import { exportRankingCommand } from './lens/ranking-command';
import { installedModels } from './model/installed-models';
import { ModelHost } from './model/model-host';
import { selectModel, type SelectModelDeps } from './model/select-model';
import { LensStatus } from './model/status-bar';

export function activate(context: vscode.ExtensionContext): void {
  const out = vscode.window.createOutputChannel('DeBERTa Lens');
  const log = (line: string) => out.appendLine(`[${new Date().toISOString()}] ${line}`);
  const showError = errorReporter(out, log);
  const { bundled, defaultDir, bundledDirs } = installedModels(context.extensionPath);
  const settings = (): LensSettings => {
    const cfg = vscode.workspace.getConfiguration(SECTION);
    return readSettings((k) => cfg.get(k));
  };
  const models = new ModelHost(openModel, defaultDir, log, bundledDirs);
  const status = new LensStatus();

  const panel = new LensPanel(
    context.extensionUri,
    () => {
      const s = settings();
      return { term: s.defaultTerm, view: s.defaultView, colorScale: s.colorScale };
    },
    {
      onHover: (id, h) => lens.fromPanel(id, h),
      onInit: (id) => {
        predictions.resend(id);
        occlusion.resend(id);
      },
      exportExtras: (id) => {
        const decision = predictions.decisionOf(id);
        const attribution = occlusion.of(id);
        return {
          ...(decision ? { decision } : {}),
          ...(attribution?.state === 'ready' ? { occlusion: attribution } : {}),
        };
      },
      onOcclude: (id, target, merge) => {
        const model = panel.model;
        const result = panel.result;
        if (target === null) {
          occlusion.cancel();
          lens.showAttribution(id, undefined);
        } else if (model && result) void occlusion.start(model, result, id, target, merge);
      },
      onPredictToken: (id, i) => void predictions.predictToken(id, i),
      onShowChoice: (_id, index) => void explain.showChoice(index),
      onRun: (result, id) => {
        lens.retarget(result, id);
        void predictions.follow(result, id);
      },
      onDispose: () => {
        occlusion.clear();
        lens.detach();
        predictions.clear();
        explain.cancel();
      },
      log,
    },
  );
  const lens = new EditorLens((i) => panel.focusToken(i));
  const predictions = new PanelPredictions({
    post: (m) => panel.send(m),
    topK: () => settings().predictionTopK,
    log,
    decided: (id, decision) => lens.showDecision(id, decision),
  });
  const occlusion = new PanelOcclusion({
    post: (m) => panel.send(m),
    log,
    shown: (id, scores, words) => lens.showAttribution(id, scores, words),
    track: trackInNotification,
  });
  // Rates timed in earlier sessions: the first long explain of a session is told its wait too.
  const rates = new RateBook(context.globalState.get('debertaLens.explainRates'), (snapshot) => {
    void context.globalState.update('debertaLens.explainRates', snapshot);
  });
  const explain = new ExplainCommand({ settings, models, status, panel, lens, predictions, log, showError, rates });
  explain.noteEditor(vscode.window.activeTextEditor);
  // Compare with Another Model: its own panel and its own second model (freed with the window).
  const compare = new ComparePanel(context.extensionUri, () => settings().colorScale, log);
  const otherModel = new ModelHost(openModel, defaultDir, log, bundledDirs);
  // The head atlas: its own panel; the engine runs on its own model instance while it builds.
  const atlasPanel: AtlasPanel = new AtlasPanel(context.extensionUri, {
    log,
    openExample: (atlas, m) => openAtlasExample({ log, showError }, atlas, m),
  });
  const atlasDeps = (): AtlasDeps => ({
    storage: context.globalStorageUri,
    settings,
    modelDir: (s) => models.modelDir(s),
    panel: atlasPanel,
    log,
    showError,
  });
  const pickDeps = (): SelectModelDeps => ({
    context,
    defaultDir,
    bundled,
    currentDir: () => models.modelDir(settings()),
    inspect: (dir) => inspectModel(dir, { isolate: true }),
    log,
    showError,
  });

  context.subscriptions.push(
    out,
    status,
    lens,
    { dispose: () => panel.dispose() },
    { dispose: () => void models.dispose() },
    vscode.commands.registerCommand('debertaLens.explain', (args?: unknown) => explain.explain(args)),
    vscode.commands.registerCommand('debertaLens.compareHeads', (args?: unknown) => explain.compareHeads(args)),
    vscode.commands.registerCommand('debertaLens.export', (args?: unknown) => exportCommand(panel, args, showError)),
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
          current: () => {
            const text = panel.isOpen ? panel.text : undefined;
            const input = panel.input;
            const at = panel.at;
            return text !== undefined && input ? { text, input, ...(at ? { at } : {}) } : undefined;
          },
          explain: async () => (await explain.explain()).ok,
          panel: compare,
          log,
          showError,
          rates,
        },
        args,
      ),
    ),
    { dispose: () => atlasPanel.dispose() },
    vscode.commands.registerCommand('debertaLens.buildAtlas', (args?: unknown) => buildAtlasCommand(atlasDeps(), args)),
    vscode.commands.registerCommand('debertaLens.openAtlas', (args?: unknown) => openAtlasCommand(atlasDeps(), args)),
    vscode.commands.registerCommand('debertaLens.selectModel', () => selectModel(pickDeps())),
    vscode.window.onDidChangeActiveTextEditor((e) => explain.noteEditor(e)),
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
