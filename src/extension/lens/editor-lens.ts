// While the panel shows a result, the editor it came from shows attention too: the cursor (or mouse) on a
// token lights up the tokens it attends to (a few decoration types bucketed by strength) and a hover lists
// the per-term numbers. Read-only: the document is never edited.
import * as vscode from 'vscode';
import { escapeMarkdown as escapeMd } from '../../shared/markup-text';
import type { ExplainResult, MatrixKind } from '../../engine';
import type { HoverInfo } from '../../shared/protocol/lens';
import { formatValue } from '../../shared/format';
import { isRawTerm, kindsOf } from '../../shared/kinds';
import { neighbours, strengthBucket } from '../../shared/hover';
import { pieceLabel, tokenAtOffset, visibleSpan } from '../../shared/token-layout';
import { protocolTokens } from '../common/result-shape';
import type { Decision } from '../../shared/decision';
import { EditorAttribution } from './editor-attribution';
import { EditorDecision } from './editor-decision';

const BUCKETS = 4;
const TOP_K = 8;
/** Raw terms: the few keys that lower the score most, in a second (blue) colour apart from the orange. */
const TOP_NEGATIVE = 4;

export interface Attachment {
  document: vscode.TextDocument;
  version: number;
  /** Document offset of the explained text's first character (token offsets are relative to it). */
  base: number;
  result: ExplainResult;
  resultId: number;
}

export class EditorLens implements vscode.HoverProvider {
  private att: Attachment | undefined;
  private view = { layer: 0, head: 0, kind: 'probs' as MatrixKind };
  private readonly levels: vscode.TextEditorDecorationType[];
  private readonly negLevels: vscode.TextEditorDecorationType[];
  private readonly query: vscode.TextEditorDecorationType;
  private readonly disposables: vscode.Disposable[] = [];
  /** The task head's decision marked in the same editor (entities, the answer, the label). */
  private readonly marks = new EditorDecision();
  /** Which words made the decision (occlusion scores), shaded in the same editor. */
  private readonly attribution = new EditorAttribution();

  constructor(private readonly onFocus: (i: number | null) => void) {
    this.levels = Array.from({ length: BUCKETS }, (_, k) =>
      vscode.window.createTextEditorDecorationType({
        backgroundColor: `rgba(255, 150, 30, ${(0.12 + (0.6 * (k + 1)) / BUCKETS).toFixed(2)})`,
        borderRadius: '2px',
      }),
    );
    this.negLevels = Array.from({ length: BUCKETS }, (_, k) =>
      vscode.window.createTextEditorDecorationType({
        backgroundColor: `rgba(60, 130, 235, ${(0.12 + (0.5 * (k + 1)) / BUCKETS).toFixed(2)})`,
        borderRadius: '2px',
        textDecoration: 'underline dotted',
      }),
    );
    this.query = vscode.window.createTextEditorDecorationType({
      borderStyle: 'solid',
      borderWidth: '1px',
      borderColor: new vscode.ThemeColor('focusBorder'),
      borderRadius: '2px',
    });
    this.disposables.push(
      vscode.languages.registerHoverProvider('*', this), // any document; provideHover filters to the explained one
      vscode.window.onDidChangeTextEditorSelection((e) => this.onSelection(e)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.att && e.document === this.att.document && e.contentChanges.length) this.detach();
      }),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (this.att && d === this.att.document) this.detach();
      }),
    );
  }

  attach(a: Attachment, view: { layer: number; head: number; kind: MatrixKind }): void {
    this.clear();
    this.marks.clear();
    this.attribution.clear();
    this.att = a;
    this.view = view;
  }

  /** The panel shows another run of the same text (an intervened run, or the plain one again): follow it. */
  retarget(result: ExplainResult, resultId: number): void {
    if (this.att && this.att.result.n === result.n) this.att = { ...this.att, result, resultId };
  }

  /** Forget the result (panel closed, document edited): offsets no longer line up. */
  detach(): void {
    this.clear();
    this.marks.clear();
    this.attribution.clear();
    this.att = undefined;
  }

  /** Result `resultId`'s task-head decision (undefined: none) is known: mark it in the editor. */
  showDecision(resultId: number, decision: Decision | undefined): void {
    const a = this.att;
    if (a && a.resultId === resultId && a.document.version === a.version)
      this.marks.show({ document: a.document, base: a.base, tokens: a.result.tokens }, decision);
  }

  /** Result `resultId`'s occlusion scores (undefined: none): shade the tokens in the editor. */
  showAttribution(resultId: number, scores: (number | null)[] | undefined, words = false): void {
    const a = this.att;
    if (a && a.resultId === resultId && a.document.version === a.version)
      this.attribution.show({ document: a.document, base: a.base, tokens: a.result.tokens }, scores, words);
  }

  /** The explained token at `pos` of `doc`, with the result it belongs to and its range in the document. */
  locate(doc: vscode.TextDocument, pos: vscode.Position): { i: number; resultId: number; range: vscode.Range } | undefined {
    const i = this.tokenAt(doc, pos);
    const a = this.att;
    if (i === null || !a) return undefined;
    const range = tokenRange(doc, a, i);
    return range && { i, resultId: a.resultId, range };
  }

  /** The panel's hover: mirror it in the editor (same layer, head and term). */
  fromPanel(resultId: number, h: HoverInfo): void {
    if (!this.att || this.att.resultId !== resultId) return;
    this.view = { layer: h.layer, head: h.head, kind: h.kind };
    if (h.i === null) this.clear();
    else this.decorate(h.i);
  }

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position): Promise<vscode.Hover | undefined> {
    const i = this.tokenAt(doc, pos);
    const a = this.att;
    if (i === null || !a) return undefined;
    const r = a.result;
    const { layer, head, kind } = this.view;
    const range = tokenRange(doc, a, i);
    if (!range || !r.layers.includes(layer) || r.released) return undefined;
    // The layer the view shows is normally computed already; otherwise this is one one-layer run.
    await r.load(layer);
    this.decorate(i);
    const n = r.n;
    const row = r.slice(layer, head, kind).subarray(i * n, (i + 1) * n);
    const kinds = kindsOf((k) => r.has(k));
    const md = new vscode.MarkdownString(undefined, true);
    md.isTrusted = false;
    md.appendMarkdown(
      `**DeBERTa Lens** · token “${escapeMd(pieceLabel(r.tokens[i]?.text ?? ''))}” (#${i}) · layer ${layer} · head ${head} · top by ${kind}` +
        (isRawTerm(kind) ? ' (what raises the score; what lowers it is marked)' : '') +
        '\n\n',
    );
    md.appendMarkdown(`| key | ${kinds.join(' | ')} |\n|---|${kinds.map(() => '---:').join('|')}|\n`);
    const nbs = neighbours(row, kind, 5);
    for (const [sign, list] of [
      ['', nbs.top],
      ['(lowers) ', nbs.negative.slice(0, 3)],
    ] as const) {
      for (const nb of list) {
        const cells = kinds.map((k) => formatValue(r.value(layer, head, k, i, nb.j)));
        md.appendMarkdown(`| ${sign}“${escapeMd(pieceLabel(r.tokens[nb.j]?.text ?? ''))}” #${nb.j} | ${cells.join(' | ')} |\n`);
      }
    }
    md.appendMarkdown(`\nscale = ${formatValue(r.scale)}; scores = (c2c + c2p + p2c) / scale`);
    return new vscode.Hover(md, range);
  }

  dispose(): void {
    this.clear();
    this.marks.dispose();
    this.attribution.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    for (const t of [...this.levels, ...this.negLevels, this.query]) t.dispose();
  }

  private onSelection(e: vscode.TextEditorSelectionChangeEvent): void {
    const active = e.selections[0]?.active;
    if (!this.att || e.textEditor.document !== this.att.document || !active) return;
    const i = this.tokenAt(e.textEditor.document, active);
    if (i === null) this.clear();
    else this.decorate(i);
    this.onFocus(i);
  }

  private tokenAt(doc: vscode.TextDocument, pos: vscode.Position): number | null {
    const a = this.att;
    if (!a || doc !== a.document || doc.version !== a.version) return null;
    return tokenAtOffset(protocolTokens(a.result), doc.offsetAt(pos) - a.base);
  }

  private editors(): vscode.TextEditor[] {
    const a = this.att;
    return a ? vscode.window.visibleTextEditors.filter((ed) => ed.document === a.document) : [];
  }

  private decorate(i: number, waited = false): void {
    const a = this.att;
    if (!a) return;
    const r = a.result;
    const { layer, head, kind } = this.view;
    if (!r.layers.includes(layer) || !r.has(kind) || r.released) return;
    if (!r.isLoaded(layer)) {
      if (!waited)
        r.load(layer).then(
          () => this.decorate(i, true),
          () => undefined,
        );
      return;
    }
    const n = r.n;
    const row = r.slice(layer, head, kind).subarray(i * n, (i + 1) * n);
    const byLevel: vscode.Range[][] = this.levels.map(() => []);
    const doc = a.document;
    // Only the characters with ink: a "▁" piece's space or a line break would paint a stub at a line's end.
    const toRange = (k: number): vscode.Range[] => {
      const t = r.tokens[k];
      if (!t || t.special) return []; // specials have no source text to decorate
      const from = a.base + t.start;
      const own = doc.getText(new vscode.Range(doc.positionAt(from), doc.positionAt(a.base + t.end)));
      const v = visibleSpan(own, 0, own.length);
      return v ? [new vscode.Range(doc.positionAt(from + v.start), doc.positionAt(from + v.end))] : [];
    };
    const byNegLevel: vscode.Range[][] = this.negLevels.map(() => []);
    // Specials are left out of the neighbours: no text of theirs lights up.
    const nbs = neighbours(row, kind, TOP_K, (j) => r.tokens[j]?.special === true);
    for (const nb of nbs.top) {
      const b = strengthBucket(nb.strength, BUCKETS);
      if (b > 0) byLevel[b - 1]?.push(...toRange(nb.j));
    }
    for (const nb of nbs.negative.slice(0, TOP_NEGATIVE)) {
      const b = strengthBucket(nb.strength, BUCKETS);
      if (b > 0) byNegLevel[b - 1]?.push(...toRange(nb.j));
    }
    for (const ed of this.editors()) {
      this.levels.forEach((t, k) => ed.setDecorations(t, byLevel[k] ?? []));
      this.negLevels.forEach((t, k) => ed.setDecorations(t, byNegLevel[k] ?? []));
      ed.setDecorations(this.query, toRange(i));
    }
  }

  private clear(): void {
    for (const ed of this.editors()) for (const t of [...this.levels, ...this.negLevels, this.query]) ed.setDecorations(t, []);
  }
}

/** Where token `i` of the attached result sits in `doc`; undefined for an index the result lacks. */
function tokenRange(doc: vscode.TextDocument, a: Attachment, i: number): vscode.Range | undefined {
  const t = a.result.tokens[i];
  return t && new vscode.Range(doc.positionAt(a.base + t.start), doc.positionAt(a.base + t.end));
}
