// "DeBERTa Lens: Select Model…": the embedded default, recently used folders, every DeBERTa or BERT snapshot in
// the local Hugging Face cache, or a folder picked by hand. A folder is validated before the setting is saved.
// "Compare with another model…" asks with the same pick (pickModelFolder) and saves nothing.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BundledModel, ModelSummary } from '../../engine';
import { listHfCacheModels } from './hf-cache';
import { SECTION } from '../common/settings';
import { openSetting } from '../common/error-report';
import { modelSettingTarget, type SettingScope } from './setting-target';

const CONFIGURATION_TARGETS: Record<SettingScope, vscode.ConfigurationTarget> = {
  user: vscode.ConfigurationTarget.Global,
  workspace: vscode.ConfigurationTarget.Workspace,
};

/** Opens the settings editor on the scope the model folder was saved in. */
function openModelSetting(scope: SettingScope): void {
  const query = `@id:${SECTION}.modelPath`;
  if (scope === 'user') return openSetting('modelPath', true);
  void vscode.commands.executeCommand('workbench.action.openWorkspaceSettings', { query });
}

const RECENT_KEY = 'debertaLens.recentModels';
const MAX_RECENT = 8;

interface ModelItem extends vscode.QuickPickItem {
  dir?: string; // undefined for "Browse…"
  /** What the model-path setting saves for a bundled model: '' (the default) or its name; not a path that changes per version. */
  bundledSetting?: string;
}

/** A model shipped with the extension and where this installation holds it. */
export interface BundledDir {
  model: BundledModel;
  dir: string;
}

export interface SelectModelDeps {
  context: vscode.ExtensionContext;
  defaultDir: string;
  bundled: readonly BundledDir[];
  currentDir: () => string;
  inspect: (dir: string) => Promise<ModelSummary>;
  log: (line: string) => void;
  showError: (e: unknown) => void;
}

export function recentModels(context: vscode.ExtensionContext): string[] {
  const v = context.globalState.get<unknown>(RECENT_KEY);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export async function rememberModel(context: vscode.ExtensionContext, dir: string): Promise<void> {
  const next = [dir, ...recentModels(context).filter((d) => d !== dir)].slice(0, MAX_RECENT);
  await context.globalState.update(RECENT_KEY, next);
}

async function buildItems(d: SelectModelDeps): Promise<ModelItem[]> {
  const current = d.currentDir();
  const mark = (dir: string) => (path.resolve(dir) === path.resolve(current) ? '$(check) ' : '');
  const items: ModelItem[] = [{ label: 'Embedded', kind: vscode.QuickPickItemKind.Separator }];
  for (const b of d.bundled) {
    items.push({
      label: `${mark(b.dir)}${b.model.label}`,
      description: b.model.description,
      detail: b.dir,
      dir: b.dir,
      bundledSetting: b.dir === d.defaultDir ? '' : b.model.name,
    });
  }
  const isBundled = (dir: string) => d.bundled.some((b) => path.resolve(b.dir) === path.resolve(dir));
  const recent = recentModels(d.context).filter((r) => !isBundled(r));
  if (recent.length) {
    items.push({ label: 'Recently used', kind: vscode.QuickPickItemKind.Separator });
    for (const r of recent) items.push({ label: `${mark(r)}${path.basename(r)}`, detail: r, dir: r });
  }
  const cached = await listHfCacheModels();
  if (cached.length) {
    items.push({ label: 'Hugging Face cache', kind: vscode.QuickPickItemKind.Separator });
    for (const c of cached) {
      items.push({
        label: `${mark(c.path)}${c.name}`,
        description: `${c.modelType} · ${c.revision.slice(0, 8)}`,
        detail: c.path,
        dir: c.path,
      });
    }
  }
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: '$(folder-opened) Browse…', description: 'a folder with config.json and weights' });
  return items;
}

export interface PickedModel {
  dir: string;
  /** Set for a bundled model: the model-path setting's value for it ('' or its name). */
  bundledSetting?: string;
  summary: ModelSummary;
}

/**
 * The quick pick (bundled model, recent folders, Hugging Face cache, Browse…), then a check of the folder
 * (errors shown in one line). Resolves to undefined when cancelled or invalid. Saves nothing.
 */
export async function pickModelFolder(
  d: SelectModelDeps,
  ask: { title: string; placeHolder: string } = {
    title: 'DeBERTa Lens: Select Model',
    placeHolder: 'Pick a DeBERTa (v1, v2, v3) or BERT checkpoint',
  },
): Promise<PickedModel | undefined> {
  const picked = await vscode.window.showQuickPick(buildItems(d), { ...ask, matchOnDescription: true, matchOnDetail: true });
  if (!picked) return undefined;
  let dir = picked.dir;
  if (!dir) {
    const uris = await vscode.window.showOpenDialog({
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      openLabel: 'Use this model',
      title: 'Folder with config.json, the weights and the tokenizer',
    });
    const picked = uris?.[0];
    if (!picked) return undefined;
    dir = picked.fsPath;
  }
  const chosen = dir;
  try {
    const summary = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `DeBERTa Lens: checking ${path.basename(chosen)}…` },
      () => d.inspect(chosen),
    );
    return { dir: chosen, bundledSetting: picked.bundledSetting, summary };
  } catch (e) {
    d.showError(e);
    return undefined;
  }
}

/** Returns the saved folder ('' for the default), or undefined when cancelled or invalid. */
export async function selectModel(d: SelectModelDeps): Promise<string | undefined> {
  const picked = await pickModelFolder(d);
  if (!picked) return undefined;
  const { dir: chosen, summary } = picked;
  const value = picked.bundledSetting ?? chosen;
  const cfg = vscode.workspace.getConfiguration(SECTION);
  // Written where the value in effect comes from, and said where: a later edit of another scope would not apply.
  const { scope, where } = modelSettingTarget(cfg.inspect('modelPath'), vscode.env.remoteName);
  await cfg.update('modelPath', value, CONFIGURATION_TARGETS[scope]);
  if (picked.bundledSetting === undefined) await rememberModel(d.context, chosen);
  d.log(
    `model set to ${chosen} in ${where}: ${summary.type}, ${summary.layers} layers × ${summary.heads} heads, terms ${summary.terms.join(', ')}`,
  );
  void vscode.window
    .showInformationMessage(
      `DeBERTa Lens: using ${summary.name} (${summary.layers} layers, ${summary.heads} heads, ${summary.terms.join('/')}); saved debertaLens.modelPath in ${where}.`,
      'Open Setting',
    )
    .then((action) => {
      if (action === 'Open Setting') openModelSetting(scope);
    });
  return value;
}
