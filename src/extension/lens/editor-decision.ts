// A fine-tuned checkpoint's decision in the editor it came from: each entity a token classifier finds underlined
// in its colour with its label after it; a question-answering head's answer highlighted; a sequence classifier's
// label after the explained text. Each mark's hover gives the scores. Read-only: decorations only.
import * as vscode from 'vscode';
import { escapeMarkdown as escapeMd } from '../../shared/markup-text';
import type { Token } from '../../engine';
import { type Decision, decisionLine, entityColour, entitySpans, formatScore, shortChoice, tokenScoresLine } from '../../shared/decision';
import { visibleSpan } from '../../shared/token-layout';

export interface MarkTarget {
  document: vscode.TextDocument;
  /** Document offset the tokens' offsets count from. */
  base: number;
  tokens: readonly Token[];
}

export class EditorDecision implements vscode.Disposable {
  private shown: { target: MarkTarget; decision: Decision } | undefined;
  /** Entity underline decorations by colour (created on first use; a checkpoint has few entities). */
  private readonly byColour = new Map<string, vscode.TextEditorDecorationType>();
  private readonly answer = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
    borderRadius: '2px',
  });
  private readonly verdict = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic', margin: '0 0 0 1.5em' },
  });
  private readonly sub = vscode.window.onDidChangeVisibleTextEditors(() => this.paint());

  show(target: MarkTarget, decision: Decision | undefined): void {
    this.clear();
    if (!decision) return;
    this.shown = { target, decision };
    this.paint();
  }

  clear(): void {
    for (const ed of this.editors()) for (const t of this.types()) ed.setDecorations(t, []);
    this.shown = undefined;
  }

  dispose(): void {
    this.clear();
    this.sub.dispose();
    for (const t of this.types()) t.dispose();
  }

  private types(): vscode.TextEditorDecorationType[] {
    return [...this.byColour.values(), this.answer, this.verdict];
  }

  private editors(): vscode.TextEditor[] {
    return editorsOf(this.shown?.target.document);
  }

  private paint(): void {
    const s = this.shown;
    if (!s) return;
    const { target, decision } = s;
    const doc = target.document;
    const range = (from: number, to: number) => inkRange(doc, target.base + from, target.base + to);
    const byColour = new Map<string, vscode.DecorationOptions[]>();
    const answers: vscode.DecorationOptions[] = [];
    const verdicts: vscode.DecorationOptions[] = [];
    const tokens = target.tokens;
    if (decision.task === 'token-classification') {
      for (const span of entitySpans(decision, (p) => tokens[p]?.special !== false)) {
        const r = range(tokens[span.first]!.start, tokens[span.last]!.end);
        if (!r) continue;
        const colour = entityColour(span.entity, decision.names);
        const hover = new vscode.MarkdownString(
          `**DeBERTa Lens** · ${escapeMd(span.entity)} · mean score ${formatScore(span.score, 'softmax')}\n\n` +
            Array.from({ length: span.last - span.first + 1 }, (_, k) => span.first + k)
              .map(
                (p) =>
                  `- #${p} “${escapeMd(doc.getText(range(tokens[p]!.start, tokens[p]!.end) ?? new vscode.Range(0, 0, 0, 0)))}”: ${escapeMd(tokenScoresLine(decision, p))}`,
              )
              .join('\n'),
        );
        const list = byColour.get(colour) ?? [];
        // The label after a span that ends a word: one inside a word would split it on screen (the hover still tells).
        const next = doc.getText(new vscode.Range(r.end, r.end.translate(0, 1)));
        const label = /[\p{L}\p{N}]/u.test(next) ? {} : { renderOptions: { after: { contentText: span.entity, color: colour } } };
        list.push({ range: r, hoverMessage: hover, ...label });
        byColour.set(colour, list);
      }
    } else if (decision.task === 'question-answering' && decision.answer) {
      const a = decision.answer;
      const r = tokens[a.startToken] && tokens[a.endToken] && range(tokens[a.startToken]!.start, tokens[a.endToken]!.end);
      if (r)
        answers.push({
          range: r,
          hoverMessage: new vscode.MarkdownString(
            `**DeBERTa Lens** · the answer: tokens #${a.startToken}–#${a.endToken}, start + end logit ${a.score.toFixed(3)}`,
          ),
        });
    }
    const line = decisionLine(decision, (p) => tokens[p]?.special !== false);
    // The decision itself after the explained text's last character (a label, or the answer once more).
    const last = [...tokens].reverse().find((t) => !t.special);
    if (last) {
      const end = doc.positionAt(target.base + last.end);
      const bold = (on: boolean, x: string) => (on ? `**${x}**` : x);
      const lines =
        decision.task === 'sequence-classification'
          ? decision.labels.map(
              (l) =>
                `- ${bold(l.id === decision.predicted, escapeMd(l.label))}: ${formatScore(l.score, decision.scoreFunction)} (logit ${l.logit.toFixed(3)})`,
            )
          : decision.task === 'multiple-choice'
            ? decision.choices.map(
                (c) =>
                  `${c.id + 1}. ${bold(c.id === decision.predicted, escapeMd(shortChoice(c.label)))}: ${formatScore(c.score, 'softmax')} (logit ${c.logit.toFixed(3)})${c.id === decision.shown ? ' · shown in the panel' : ''}`,
              )
            : [];
      verdicts.push({
        range: new vscode.Range(end, end),
        hoverMessage: new vscode.MarkdownString(`**DeBERTa Lens** · ${escapeMd(line)}\n\n${lines.join('\n')}`),
        renderOptions: { after: { contentText: `⟶ ${line}` } },
      });
    }
    for (const colour of byColour.keys())
      if (!this.byColour.has(colour))
        this.byColour.set(
          colour,
          vscode.window.createTextEditorDecorationType({
            borderColor: colour,
            borderStyle: 'none none solid none',
            borderWidth: '0 0 2px 0',
            after: { fontStyle: 'normal', fontWeight: 'bold', margin: '0 0 0 0.25em', textDecoration: 'none; font-size: 0.8em' },
          }),
        );
    for (const ed of this.editors()) {
      for (const [colour, t] of this.byColour) ed.setDecorations(t, byColour.get(colour) ?? []);
      ed.setDecorations(this.answer, answers);
      ed.setDecorations(this.verdict, verdicts);
    }
  }
}

/** The characters with ink between two document offsets (a leading space or a line break paints nothing). */
export function inkRange(doc: vscode.TextDocument, from: number, to: number): vscode.Range | undefined {
  const text = doc.getText(new vscode.Range(doc.positionAt(from), doc.positionAt(to)));
  const v = visibleSpan(text, 0, text.length);
  return v ? new vscode.Range(doc.positionAt(from + v.start), doc.positionAt(from + v.end)) : undefined;
}

/** The visible editors showing `doc` (none without one). */
export function editorsOf(doc: vscode.TextDocument | undefined): vscode.TextEditor[] {
  return doc ? vscode.window.visibleTextEditors.filter((ed) => ed.document === doc) : [];
}
