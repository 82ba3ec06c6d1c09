// Which words made the decision, in the editor: each token shaded by its occlusion score — red where taking it out
// lowers the followed logit (it supported the decision), blue where it raises it — in four strengths each, with the
// score on hover. Read-only: decorations only.
import * as vscode from 'vscode';
import type { Token } from '../../engine';
import { signedStrengths } from '../../shared/occlusion';
import { editorsOf, inkRange, type MarkTarget as Target } from './editor-decision';

const LEVELS = 4;

const level = (k: number, rgb: string) =>
  vscode.window.createTextEditorDecorationType({
    backgroundColor: `rgba(${rgb}, ${(0.12 + (0.5 * (k + 1)) / LEVELS).toFixed(2)})`,
    borderRadius: '2px',
  });

export class EditorAttribution implements vscode.Disposable {
  private shown: { target: Target; scores: (number | null)[]; words: boolean } | undefined;
  private readonly pos = Array.from({ length: LEVELS }, (_, k) => level(k, '220, 60, 40'));
  private readonly neg = Array.from({ length: LEVELS }, (_, k) => level(k, '40, 110, 220'));
  private readonly sub = vscode.window.onDidChangeVisibleTextEditors(() => this.paint());

  /** `words`: each word was taken out whole (every piece holds its word's score). */
  show(target: Target, scores: (number | null)[] | undefined, words = false): void {
    this.clear();
    if (!scores) return;
    this.shown = { target, scores, words };
    this.paint();
  }

  clear(): void {
    for (const ed of this.editors()) for (const t of [...this.pos, ...this.neg]) ed.setDecorations(t, []);
    this.shown = undefined;
  }

  dispose(): void {
    this.clear();
    this.sub.dispose();
    for (const t of [...this.pos, ...this.neg]) t.dispose();
  }

  private editors(): vscode.TextEditor[] {
    return editorsOf(this.shown?.target.document);
  }

  private paint(): void {
    const s = this.shown;
    if (!s) return;
    const { document: doc, base, tokens } = s.target;
    const strengths = signedStrengths(s.scores);
    const byPos: vscode.DecorationOptions[][] = this.pos.map(() => []);
    const byNeg: vscode.DecorationOptions[][] = this.neg.map(() => []);
    strengths.forEach((x, i) => {
      const t: Token | undefined = tokens[i];
      const score = s.scores[i];
      if (!t || t.special || x === 0 || score === null || score === undefined) return;
      const range = inkRange(doc, base + t.start, base + t.end);
      if (!range) return;
      const k = Math.min(LEVELS - 1, Math.floor(Math.abs(x) * LEVELS));
      const hover = new vscode.MarkdownString(
        `**DeBERTa Lens** · occlusion: masking ${s.words ? `the word holding #${i}` : `#${i}`} moves the followed logit by ${(-score).toFixed(4)} (${score > 0 ? 'it supported the decision' : 'it worked against it'})`,
      );
      (x > 0 ? byPos : byNeg)[k]?.push({ range, hoverMessage: hover });
    });
    for (const ed of this.editors()) {
      this.pos.forEach((t, k) => ed.setDecorations(t, byPos[k] ?? []));
      this.neg.forEach((t, k) => ed.setDecorations(t, byNeg[k] ?? []));
    }
  }
}
