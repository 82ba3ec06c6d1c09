// "DeBERTa Lens: Build Head Atlas for Folder…" (palette, explorer folders) and "Open Head Atlas…": the atlas
// engine (../../analysis/atlas/) run on a folder with the configured model in a worker thread (listing, reading,
// tokenizing and the per-head sums never hold the extension host's thread; the model runs in its own process), its
// output in the extension's global storage; a cancelled run keeps its checkpoint there and the same command on the
// same folder resumes it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AtlasJson } from '../../analysis/atlas/atlas';
import { buildAtlasInThread } from '../../analysis/atlas/threaded-atlas';
import { isLensError, LensError } from '../../engine';
import type { AtlasOpenMessage } from '../../shared/atlas';
import type { LensSettings } from '../common/settings';
import { examplePlace, readAtlasFile } from './atlas-file';
import { atlasOutPath, checkCorpusFolder } from './build-place';
import type { AtlasPanel } from './panel';

export type AtlasOutcome =
  { ok: true; file: string; texts: number; tokens: number; heads: number; resumed: boolean; ms: number } | { ok: false; error: string };

export interface AtlasDeps {
  storage: vscode.Uri;
  settings(): LensSettings;
  /** The model folder the settings point at (the bundled one when the setting is empty). */
  modelDir(s: LensSettings): string;
  panel: AtlasPanel;
  log(line: string): void;
  showError(e: unknown): void;
}

/** The explorer passes the folder's Uri; tests pass `{ folder }`. */
function folderArg(raw: unknown): string | undefined {
  if (raw instanceof vscode.Uri) return raw.fsPath;
  if (raw && typeof raw === 'object' && typeof (raw as Record<string, unknown>).folder === 'string')
    return (raw as { folder: string }).folder;
  return undefined;
}

export async function buildAtlasCommand(d: AtlasDeps, raw?: unknown): Promise<AtlasOutcome> {
  try {
    return await runBuild(d, raw);
  } catch (e) {
    if (!(isLensError(e) && e.code === 'cancelled')) d.showError(e);
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

async function runBuild(d: AtlasDeps, raw: unknown): Promise<AtlasOutcome> {
  let folder = folderArg(raw);
  if (folder === undefined) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      title: 'DeBERTa Lens: Build Head Atlas for Folder',
      openLabel: 'Build Atlas',
    });
    if (!picked?.[0]) return { ok: false, error: 'cancelled' };
    folder = picked[0].fsPath;
  }
  folder = path.resolve(folder);
  await checkCorpusFolder(folder);
  const s = d.settings();
  const dir = d.modelDir(s);
  const out = atlasOutPath(d.storage.fsPath, dir, folder);
  const checkpoint = `${out}.partial`;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const resumed = fs.existsSync(checkpoint);
  const controller = new AbortController();
  const t0 = performance.now();
  let done = { texts: 0, tokens: 0 };
  const name = path.basename(folder);
  d.log(`atlas: ${resumed ? 'resuming' : 'building'} ${folder} with ${dir} → ${out}`);
  let atlas: AtlasJson;
  try {
    atlas = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `DeBERTa Lens: ${resumed ? 'resuming the head atlas' : 'building the head atlas'} of ${name}`,
        cancellable: true,
      },
      async (progress, token) => {
        token.onCancellationRequested(() => controller.abort());
        const lead = resumed ? 'resuming where the last run stopped: ' : '';
        progress.report({ message: `${lead}starting…` });
        let said = 0;
        return await buildAtlasInThread(
          {
            modelDir: dir,
            // The checkpoint is parsed in a budgeted process, as every open from VS Code is.
            engine: { executionProvider: s.executionProvider, cacheMaxGB: s.cacheMaxGB, isolate: true },
            options: { corpus: folder, checkpoint },
          },
          {
            signal: controller.signal,
            log: (line) => d.log(line),
            onStage: (line) => {
              d.log(`atlas: ${line}`);
              progress.report({ message: `${lead}${line}` });
            },
            onSkip: (line) => d.log(`atlas: ${line}`),
            onProgress: ({ texts, tokens, file }) => {
              done = { texts, tokens };
              if (performance.now() - said < 250) return;
              said = performance.now();
              progress.report({ message: `${resumed ? 'resumed: ' : ''}${texts} texts, ${tokens} tokens (${file}); Cancel keeps them` });
            },
          },
        );
      },
    );
  } catch (e) {
    if (isLensError(e) && e.code === 'cancelled') {
      const line = `Head atlas of ${name} stopped; what it did is kept (${done.texts} texts, ${done.tokens} tokens): run Build Head Atlas for Folder on the same folder to resume.`;
      d.log(`atlas: ${line}`);
      void vscode.window.showInformationMessage(`DeBERTa Lens: ${line}`);
    }
    throw e;
  }
  fs.writeFileSync(out, `${JSON.stringify(atlas)}\n`);
  fs.rmSync(checkpoint, { force: true });
  const ms = performance.now() - t0;
  d.log(`atlas: ${atlas.texts} texts, ${atlas.tokens} tokens, ${atlas.heads.length} heads in ${ms.toFixed(0)} ms → ${out}`);
  for (const line of atlas.skipped) d.log(`atlas: ${line}`);
  d.panel.show(out, atlas);
  return { ok: true, file: out, texts: atlas.texts, tokens: atlas.tokens, heads: atlas.heads.length, resumed, ms };
}

/** "Open Head Atlas…": an atlas JSON alone, or beside the one on screen. Tests pass `{ file, beside }`. */
export async function openAtlasCommand(d: AtlasDeps, raw?: unknown): Promise<{ ok: boolean; heads?: number; error?: string }> {
  try {
    const a = raw && typeof raw === 'object' && !(raw instanceof vscode.Uri) ? (raw as Record<string, unknown>) : {};
    let file = raw instanceof vscode.Uri ? raw.fsPath : typeof a.file === 'string' ? a.file : undefined;
    let beside = a.beside === true;
    if (file === undefined) {
      const picked = await vscode.window.showOpenDialog({
        canSelectFiles: true,
        filters: { 'Head atlas (JSON)': ['json'] },
        title: 'DeBERTa Lens: Open Head Atlas',
        defaultUri: vscode.Uri.file(path.join(d.storage.fsPath, 'atlas')),
      });
      if (!picked?.[0]) return { ok: false, error: 'cancelled' };
      file = picked[0].fsPath;
      if (d.panel.count > 0) {
        const how = await vscode.window.showQuickPick(['Beside the atlas on screen (which heads moved)', 'Alone'], {
          title: 'DeBERTa Lens: Open Head Atlas',
        });
        if (!how) return { ok: false, error: 'cancelled' };
        beside = how.startsWith('Beside');
      }
    }
    const atlas = readAtlasFile(file);
    d.panel.show(file, atlas, beside);
    d.log(`atlas: opened ${file}${beside ? ' beside the one on screen' : ''}`);
    return { ok: true, heads: atlas.heads.length };
  } catch (e) {
    d.showError(e);
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * A top example clicked in the panel: its file opened with the query token selected, then the lens panel run on
 * its paragraph at that layer and head with the query row pinned (`debertaLens.explain`'s `openAt`).
 */
export async function openAtlasExample(d: Pick<AtlasDeps, 'log' | 'showError'>, atlas: AtlasJson, m: AtlasOpenMessage): Promise<void> {
  try {
    const top = atlas.heads.find((h) => h.layer === m.layer && h.head === m.head)?.top[m.index];
    if (!top) throw new LensError(`the atlas has no example ${m.index + 1} for layer ${m.layer}, head ${m.head}`);
    const place = examplePlace(atlas, top);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(place.file));
    if (doc.getText() !== place.text) throw new LensError(`${place.file}: changed since the atlas was built; build the atlas again`);
    const range = (s: number, e: number) => new vscode.Selection(doc.positionAt(s), doc.positionAt(e));
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preserveFocus: false });
    editor.selection = range(...place.paragraph);
    d.log(`atlas: example ${m.index + 1} of layer ${m.layer} head ${m.head} → ${place.file} [${place.query[0]}, ${place.query[1]})`);
    await vscode.commands.executeCommand('debertaLens.explain', {
      openAt: { layer: m.layer, head: m.head, offset: place.query[0] - place.paragraph[0] },
    });
    // A SentencePiece word's span starts at the space before it: the selection covers the word.
    const [q0, q1] = place.query;
    const lead = place.text.slice(q0, q1).length - place.text.slice(q0, q1).trimStart().length;
    editor.selection = range(Math.min(q0 + lead, q1), q1);
    editor.revealRange(editor.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } catch (e) {
    d.showError(e);
  }
}
