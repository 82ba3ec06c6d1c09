// `debertaLens.export` with `{ format, path?, widthCm?, dpi? }` (tests and keybindings pass a path; without one a save dialog
// asks). Without a format a quick pick asks. Resolves to `{ ok, path }` or `{ ok: false, error }`.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LensError } from '../../engine';
import { isExportFormat, parseFigureSize, type ExportFormat } from '../../shared/protocol/lens';
import type { LensPanel } from './panel';

const FORMAT_PICKS: readonly vscode.QuickPickItem[] = [
  { label: 'png', description: 'the current view as an image' },
  { label: 'svg', description: 'the current heatmap as vector cells' },
  { label: 'npz', description: 'every layer and term, for NumPy' },
  { label: 'json', description: 'every layer and term, as the CLI writes it' },
  { label: 'html', description: 'a self-contained report that opens offline' },
];

export async function exportCommand(
  panel: LensPanel,
  raw: unknown,
  showError: (e: unknown) => void,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  const a = raw && typeof raw === 'object' && !(raw instanceof vscode.Uri) ? (raw as Record<string, unknown>) : {};
  try {
    let format: ExportFormat | undefined = isExportFormat(a.format) ? a.format : undefined;
    if (a.format !== undefined && !format)
      throw new LensError(`Export: unknown format ${JSON.stringify(a.format)}; use png, svg, npz, json or html.`);
    if (!format) {
      const pick = await vscode.window.showQuickPick(FORMAT_PICKS, { placeHolder: 'Export the DeBERTa Lens result as…' });
      if (!pick) return { ok: false, error: 'cancelled' };
      format = pick.label as ExportFormat;
    }
    const target = typeof a.path === 'string' && a.path ? path.resolve(a.path) : undefined;
    const file = await panel.exportCurrent(format, target, undefined, parseFigureSize(a));
    if (!file) return { ok: false, error: 'cancelled' };
    if (!target) void vscode.window.showInformationMessage(`DeBERTa Lens: exported ${format.toUpperCase()} to ${file}`);
    return { ok: true, path: file };
  } catch (e) {
    showError(e);
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
