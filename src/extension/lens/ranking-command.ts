// `debertaLens.exportRanking` with `{ format: 'json' | 'csv', path? }`: writes the last head ranking of the panel
// (tests and scripts pass a path; without one a save dialog asks, without a format a quick pick).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LensPanel } from './panel';

export async function exportRankingCommand(
  panel: LensPanel,
  raw: unknown,
  showError: (e: unknown) => void,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  const a = raw && typeof raw === 'object' && !(raw instanceof vscode.Uri) ? (raw as Record<string, unknown>) : {};
  try {
    let format: 'json' | 'csv' | undefined = a.format === 'json' || a.format === 'csv' ? a.format : undefined;
    if (!format) {
      const pick = await vscode.window.showQuickPick(['csv', 'json'], { placeHolder: 'Export the head ranking as…' });
      if (!pick) return { ok: false, error: 'cancelled' };
      format = pick === 'json' ? 'json' : 'csv';
    }
    const target = typeof a.path === 'string' && a.path ? path.resolve(a.path) : undefined;
    const file = await panel.runs.exportRanking(format, target);
    return file ? { ok: true, path: file } : { ok: false, error: 'cancelled' };
  } catch (e) {
    showError(e);
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
