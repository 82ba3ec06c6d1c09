// The product's main path, `debertaLens.explain`: the editor's selection (or the paragraph at the cursor) goes to
// the engine under a cancellable progress notification; the result goes to the panel, the editor lens and the
// fill-mask predictions. One explain at a time per window.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { InputTooLongError, isLensError, type LensModel, LensError } from '../engine';
import type { ViewName } from '../shared/protocol/lens';
import type { ErrorFixers } from './common/error-report';
import { explainError, modelOpenError } from './common/messages';
import { explainPercent, explainRunningText, explainStartText, LONG_WAIT_MS, type RateBook } from './common/work-progress';
import { positionSpecOf } from './common/result-shape';
import type { LensSettings } from './common/settings';
import type { EditorLens } from './lens/editor-lens';
import { paragraphAround, type PartSource, type SelectionPart, selectionInput, sepParts } from './common/text-range';
import type { LensPanel } from './lens/panel';
import type { ChoiceRuns, PanelPredictions } from './lens/panel-predictions';
import type { ModelHost } from './model/model-host';
import type { LensStatus } from './model/status-bar';

/** What `debertaLens.explain` resolves to; the integration tests read it. */
export type ExplainOutcome =
  | { ok: true; tokens: number; layers: number; heads: number; terms: string[]; ms: number; executionProvider: string }
  | { ok: false; error: string; code: string };

/** Optional argument of the explain commands (tests and keybindings may pass it). */
export interface ExplainArgs {
  /** Aborts the run after this many milliseconds, as the progress notification's Cancel button does. */
  cancelAfterMs?: number;
  view?: ViewName;
  /** Open at this layer and head with the token at `offset` (UTF-16, in the selection) pinned: the head atlas's examples. */
  openAt?: { layer: number; head: number; offset: number };
}

/** Menus pass a Uri as the first argument and keybindings may pass anything: keep only what we know. */
export function explainArgs(raw: unknown): ExplainArgs {
  if (!raw || typeof raw !== 'object' || raw instanceof vscode.Uri) return {};
  const a = raw as Record<string, unknown>;
  return {
    cancelAfterMs: typeof a.cancelAfterMs === 'number' && a.cancelAfterMs >= 0 ? a.cancelAfterMs : undefined,
    view: a.view === 'heads' || a.view === 'heatmap' ? a.view : undefined,
    openAt: openAtArg(a.openAt),
  };
}

function openAtArg(raw: unknown): ExplainArgs['openAt'] {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  const ok = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;
  return ok(o.layer) && ok(o.head) && ok(o.offset) ? { layer: o.layer, head: o.head, offset: o.offset } : undefined;
}

export interface ExplainDeps {
  settings(): LensSettings;
  models: ModelHost;
  status: LensStatus;
  panel: LensPanel;
  lens: EditorLens;
  predictions: PanelPredictions;
  log(line: string): void;
  showError(e: unknown, fixers?: ErrorFixers): void;
  /** Forward-pass rates measured so far (the wait a long text is told about before it starts). */
  rates: RateBook;
}

/** The text to explain and where it sits in its document (the editor lens maps tokens back through it). */
interface Selection {
  editor: vscode.TextEditor;
  /** The document's text the tokens' offsets count from (both texts of a pair, and what lies between). */
  text: string;
  version: number;
  base: number;
  /** The texts the model reads (one, a pair, or a prompt and its choices), each with its offset into `text`. */
  parts: SelectionPart[];
  source: PartSource;
}

/**
 * The selection, or the paragraph around the cursor when nothing is selected. A sentence pair comes as two
 * selections (the earlier one is the first text) or as one with `[SEP]` typed between the texts; a multiple-choice
 * head's prompt and choices the same way, one selection or one [SEP] more per choice.
 */
function selectionToExplain(fallback: vscode.TextEditor | undefined): Selection {
  // With the focus in the panel there is no active text editor: the one used last (still on screen) is meant.
  const editor = vscode.window.activeTextEditor ?? (fallback && vscode.window.visibleTextEditors.includes(fallback) ? fallback : undefined);
  if (!editor) throw new LensError('Open a text editor and select the text to explain (DeBERTa Lens: Explain Attention).');
  const doc = editor.document;
  const chosen = [...editor.selections.filter((s) => !s.isEmpty)].sort((x, y) => x.start.compareTo(y.start));
  if (chosen.length >= 2) {
    for (let k = 1; k < chosen.length; k++)
      if (chosen[k - 1]!.end.isAfter(chosen[k]!.start))
        throw new LensError('Two selections overlap: select separate texts (a sentence pair, or a prompt and its choices).');
    const base = doc.offsetAt(chosen[0]!.start);
    const parts = chosen.map((r) => ({ text: doc.getText(r), offset: doc.offsetAt(r.start) - base }));
    const text = doc.getText(new vscode.Range(chosen[0]!.start, chosen[chosen.length - 1]!.end));
    return { editor, text, version: doc.version, base, parts, source: 'selections' };
  }
  let range: vscode.Range = editor.selection;
  if (editor.selection.isEmpty) {
    const lines = Array.from({ length: doc.lineCount }, (_, k) => doc.lineAt(k).text);
    const p = paragraphAround(lines, editor.selection.active.line);
    range = new vscode.Range(p.start, 0, p.end, doc.lineAt(p.end).text.length);
  }
  const text = doc.getText(range);
  if (!text.trim()) throw new LensError('Nothing to explain: select some text, or put the cursor on a non-empty line.');
  const parts = sepParts(text);
  // One text keeps its trailing space, as it was selected.
  return {
    editor,
    text,
    version: doc.version,
    base: doc.offsetAt(range.start),
    parts: parts.length === 1 ? [{ text, offset: 0 }] : parts,
    source: 'sep',
  };
}

const cancelled = () => new LensError('Explain was cancelled.', 'cancelled');

/** A refusal of one text for its length: "Select Text That Fits" selects what the model reads of it. */
function fitsFixer(e: unknown, sel: Selection | undefined): ErrorFixers {
  if (!(e instanceof InputTooLongError) || !sel || sel.parts.length !== 1 || e.cut.part !== 'text') return {};
  const { editor, base, version } = sel;
  const at = e.cut.at_char;
  return {
    selectFits: () => {
      const doc = editor.document;
      if (doc.version !== version) return void vscode.window.showWarningMessage('DeBERTa Lens: the text changed since; explain it again.');
      const range = new vscode.Range(doc.positionAt(base), doc.positionAt(base + at));
      editor.selection = new vscode.Selection(range.start, range.end);
      editor.revealRange(range);
      void vscode.window.showTextDocument(doc, editor.viewColumn);
    },
  };
}

export class ExplainCommand {
  /** The explain in flight, if any. */
  private running: AbortController | undefined;
  /** The text editor used last: Explain from the panel (where no text editor is active) reads its selection. */
  private lastEditor: vscode.TextEditor | undefined;

  constructor(private readonly d: ExplainDeps) {}

  /** The selection of the last explain (a multiple-choice card's Show explains it again with another choice). */
  private last: { sel: Selection; choices?: ChoiceRuns; model: LensModel } | undefined;

  /** The active text editor changed (undefined: the focus went to a panel, keep the one before). */
  noteEditor(editor: vscode.TextEditor | undefined): void {
    if (editor && editor.document.uri.scheme !== 'output') this.lastEditor = editor;
  }

  /** `debertaLens.explain`: never rejects; a failure is shown and resolves to `{ ok: false }`. */
  explain(raw?: unknown): Promise<ExplainOutcome> {
    return this.guarded(explainArgs(raw));
  }

  /** A multiple-choice card's Show: the last explain's prompt with choice `index` on screen. */
  showChoice(index: number): Promise<ExplainOutcome> {
    return this.guarded({}, index);
  }

  private async guarded(args: ExplainArgs, choice?: number): Promise<ExplainOutcome> {
    let sel: Selection | undefined;
    try {
      sel = choice === undefined ? selectionToExplain(this.lastEditor) : this.sameSelection();
      return await this.run(args, sel, choice);
    } catch (e) {
      if (isLensError(e) && e.code === 'cancelled') {
        this.d.log('explain cancelled');
        this.d.status.idle('cancelled');
      } else {
        this.d.showError(e, fitsFixer(e, sel));
        this.d.status.idle('last run failed');
        // The panel keeps what it showed, marked as the result before this failure.
        this.d.panel.markFailed(e instanceof Error ? e.message : String(e));
      }
      return { ok: false, error: e instanceof Error ? e.message : String(e), code: isLensError(e) ? e.code : 'runtime' };
    }
  }

  /** `debertaLens.compareHeads`: the heads view of the result on screen, or of a new explain when there is none. */
  async compareHeads(raw?: unknown): Promise<ExplainOutcome | undefined> {
    if (this.d.panel.result && this.d.panel.isOpen) {
      this.d.panel.showView('heads');
      return undefined;
    }
    return this.explain({ ...explainArgs(raw), view: 'heads' });
  }

  /** Closing the panel while a run is in flight cancels it: the panel must not come back on its own. */
  cancel(): void {
    this.running?.abort();
  }

  /** The last explain's selection, while its document is as it was. */
  private sameSelection(): Selection {
    const sel = this.last?.sel;
    if (!sel) throw new LensError('Nothing was explained yet: select the prompt and its choices and run Explain Attention.');
    if (sel.editor.document.isClosed || sel.editor.document.version !== sel.version)
      throw new LensError('The text changed since it was explained: select it again and run Explain Attention.');
    return sel;
  }

  private async run(args: ExplainArgs, sel: Selection, choice?: number): Promise<ExplainOutcome> {
    const { panel, status } = this.d;
    this.lastEditor = sel.editor;
    const s = this.d.settings();
    const controller = new AbortController();
    this.running = controller;
    const { model, result, ms, choices } = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'DeBERTa Lens', cancellable: true },
      async (progress, token) => {
        token.onCancellationRequested(() => controller.abort());
        if (args.cancelAfterMs !== undefined) setTimeout(() => controller.abort(), args.cancelAfterMs);
        if (!this.d.models.matches(s)) {
          progress.report({ message: `loading ${path.basename(this.d.models.modelDir(s))}…` });
          status.busy('loading the model');
        }
        const model = await this.d.models.get(s).catch((e: unknown) => {
          throw modelOpenError(e, s.modelPath);
        });
        if (controller.signal.aborted) throw cancelled();
        const task = model.summary.task_head;
        let asked = selectionInput(sel.parts, sel.source, task, choice);
        // A multiple-choice head: every choice scored first (one run each); the panel shows the predicted one's run.
        let choices: ChoiceRuns | undefined;
        if (asked.choices) {
          // Show (another choice of the same selection, same model): the scores are known.
          const known = choice !== undefined && this.last?.model === model ? this.last.choices?.predict : undefined;
          if (!known) {
            progress.report({ message: `scoring ${asked.choices.list.length} choices…` });
            status.busy('scoring the choices');
          }
          const predict =
            known ??
            (await model.predict({ text: asked.choices.prompt, choices: asked.choices.list }, controller.signal).catch((e: unknown) => {
              throw explainError(e, s.maxTokens);
            }));
          const shown = choice ?? predict.multiple_choice?.predicted ?? 0;
          asked = selectionInput(sel.parts, sel.source, task, shown);
          choices = { predict, shown: asked.choices?.shown ?? shown };
        }
        const input = asked.input;
        // Tokens first (a refusal comes now, not after a wait), then how long the forward pass will take here.
        const work = await model.estimate(input, controller.signal).catch((e: unknown) => {
          throw explainError(e, s.maxTokens);
        });
        const rateKey = `${model.info.path}|${model.info.execution_provider}`;
        const rate = this.d.rates.rate(rateKey, work.flops);
        const stage = { tokens: work.tokens, layers: work.layers, etaMs: work.flops / rate.flopsPerMs };
        progress.report({
          message: `${choices ? `choice ${choices.shown + 1} of ${asked.choices?.list.length}: ` : ''}${explainStartText({ ...stage, measured: rate.measured, pair: input.pair !== undefined })}`,
        });
        if (stage.etaMs >= LONG_WAIT_MS) this.d.log(`explain: ${work.tokens} tokens, estimated ${Math.round(stage.etaMs)} ms`);
        status.busy('explaining');
        const t0 = performance.now();
        // The runtime reports nothing until the pass ends: the line counts the time against the estimate.
        let percent = 0;
        const ticker = setInterval(() => {
          const elapsedMs = performance.now() - t0;
          const now = explainPercent({ ...stage, elapsedMs });
          progress.report({ message: explainRunningText({ ...stage, elapsedMs }), increment: now - percent });
          percent = now;
        }, 1000);
        // The head the first heatmap shows comes with the forward pass: the panel opens without waiting for its layer.
        const result = await model
          .explain({ ...input, preview: panel.previewFor(model.info, args.view, args.openAt) }, controller.signal)
          .catch((e: unknown) => {
            throw explainError(e, s.maxTokens);
          })
          .finally(() => clearInterval(ticker));
        // The pass itself, timed in the runtime: not the wait behind a layer still computing for the last result.
        this.d.rates.record(rateKey, work.flops, result.timings?.run_ms ?? performance.now() - t0);
        // The engine may finish just as the user cancels: a cancelled run shows nothing.
        if (controller.signal.aborted) throw cancelled();
        return { model, result, ms: result.timings?.total_ms ?? performance.now() - t0, choices };
      },
    );
    if (this.running === controller) this.running = undefined;
    this.last = { sel, model, ...(choices ? { choices } : {}) };
    const ep = result.model.execution_provider;
    this.d.log(`explained ${result.n} tokens with ${result.model.name} on ${ep} in ${ms.toFixed(1)} ms`);
    status.ready(result.model.name, ep, ms);
    const at = args.openAt;
    const row = at ? result.tokens.findIndex((t) => !t.special && t.start <= at.offset && at.offset < t.end) : -1;
    const openAt = at ? { layer: at.layer, head: at.head, row: row >= 0 ? row : null } : undefined;
    const id = panel.show(
      { result, text: sel.text, ms, positions: positionSpecOf(model.summary), model, ...(openAt ? { openAt } : {}) },
      args.view,
    );
    // After the panel has its result: the heads run on the explain's hidden state while the first heatmap loads.
    void this.d.predictions.start(model, result, id, undefined, choices);
    this.d.lens.attach(
      { document: sel.editor.document, version: sel.version, base: sel.base, result, resultId: id },
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
  }
}
