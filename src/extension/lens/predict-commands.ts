// Fill-mask in the editor and the command that asks about one token: the hover on a [MASK] of the explained range
// lists the model's top tokens, and `debertaLens.predictToken` masks a token (from the editor's cursor, the
// panel's strip menu or its button) and shows what the model would put there.
import * as vscode from 'vscode';
import { LensError } from '../../engine';
import type { TokenPrediction } from '../../shared/predictions';
import type { EditorLens } from './editor-lens';
import { type PanelPredictions, predictionMarkdown } from './panel-predictions';
import type { LensPanel } from './panel';

export interface PredictWiring {
  panel: LensPanel;
  lens: EditorLens;
  predictions: PanelPredictions;
  showError(e: unknown): void;
}

/** What `debertaLens.predictToken` resolves to (the integration tests read it). */
export type PredictTokenOutcome = { ok: true; prediction: TokenPrediction } | { ok: false; error: string };

/** The token the command is about: the strip's context menu passes `tokenIndex`, scripts `position`; else the cursor. */
function tokenFromArgs(raw: unknown): number | undefined {
  if (!raw || typeof raw !== 'object' || raw instanceof vscode.Uri) return undefined;
  const a = raw as Record<string, unknown>;
  const i = a.tokenIndex ?? a.position;
  return typeof i === 'number' && Number.isInteger(i) && i >= 0 ? i : undefined;
}

export function registerPredictions(w: PredictWiring): vscode.Disposable[] {
  const predictToken = async (raw?: unknown): Promise<PredictTokenOutcome> => {
    try {
      const resultId = w.predictions.resultId;
      if (resultId === undefined || !w.panel.isOpen)
        throw new LensError(
          'Explain a selection first (DeBERTa Lens: Explain Attention); then ask about one of its tokens.',
          'invalid-input',
        );
      let i = tokenFromArgs(raw);
      if (i === undefined) {
        const editor = vscode.window.activeTextEditor;
        const at = editor ? w.lens.locate(editor.document, editor.selection.active) : undefined;
        if (!at)
          throw new LensError(
            'Put the cursor on a token of the explained text (or right-click a token in the DeBERTa Lens panel).',
            'invalid-input',
          );
        if (at.resultId !== resultId) throw new LensError('The panel shows another result: explain this text again.', 'invalid-input');
        i = at.i;
      }
      w.panel.reveal();
      const prediction = await w.predictions.predictToken(resultId, i);
      if (prediction.state === 'error') throw new LensError(prediction.message, 'invalid-input');
      return { ok: true, prediction };
    } catch (e) {
      w.showError(e);
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  };

  const hover: vscode.HoverProvider = {
    async provideHover(doc, pos) {
      const at = w.lens.locate(doc, pos);
      if (!at) return undefined;
      const p = await w.predictions.at(at.resultId, at.i);
      if (!p) return undefined;
      const md = new vscode.MarkdownString(predictionMarkdown(p, doc.getText(at.range)));
      md.isTrusted = false;
      return new vscode.Hover(md, at.range);
    },
  };

  return [
    vscode.commands.registerCommand('debertaLens.predictToken', (args?: unknown) => predictToken(args)),
    // Any document: provideHover answers only inside the explained range.
    vscode.languages.registerHoverProvider('*', hover),
  ];
}
