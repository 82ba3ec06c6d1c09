// "DeBERTa Lens: Compare with Another Model…": the text the main panel shows (explained first if nothing is),
// a second model from the Select Model pick, both models run on that text, the pair shown side by side.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type ExplainResult, InputTooLongError, inspectModel, isLensError, LensError, type LensModel } from '../../engine';
import type { Decision } from '../../shared/decision';
import { decisionOf } from '../common/decision-of';
import type { ComparePanel } from './panel';
import { explainError, modelOpenError } from '../common/messages';
import type { ModelHost } from '../model/model-host';
import { pickModelFolder, rememberModel, type SelectModelDeps } from '../model/select-model';
import type { LensSettings } from '../common/settings';
import { explainStartText, type RateBook } from '../common/work-progress';

/** What the command resolves to (the integration tests and the bench read it). */
export type CompareOutcome =
  | { ok: true; a: string; b: string; tokensA: number; tokensB: number; aligned: boolean; reason?: string; sameTokens: boolean; ms: number }
  | { ok: false; error: string };

export interface CompareDeps {
  pick: SelectModelDeps;
  settings(): LensSettings;
  /** The main model (the Explain one) and the second model's own host. */
  models: ModelHost;
  other: ModelHost;
  /** The text the main panel shows and what its model read (one text, or a pair), or undefined when it shows nothing. */
  /** The main panel's result: its text, what the model read, and the layer and head it shows (where both sides start). */
  current():
    { text: string; input: { text: string; pair?: string; pairOffset?: number }; at?: { layer: number; head: number } } | undefined;
  /** Runs Explain on the editor's selection (so a text exists); false when it failed or was cancelled. */
  explain(): Promise<boolean>;
  panel: ComparePanel;
  log(line: string): void;
  showError(e: unknown): void;
  /** Forward-pass rates measured so far (shared with Explain). */
  rates: RateBook;
}

/** A fine-tuned checkpoint's decision on the explained text (its head on the kept hidden state), or undefined. */
async function decisionAfter(model: LensModel, result: ExplainResult): Promise<Decision | undefined> {
  try {
    return decisionOf(await model.predictExplained(result, {}));
  } catch {
    return undefined; // the encoder still compares; the side shows no decision
  }
}

/** The main panel's button passes `{ startAt: { layer, head } }`: where both sides start. */
function startAtArg(raw: unknown): { layer: number; head: number } | undefined {
  if (!raw || typeof raw !== 'object' || raw instanceof vscode.Uri) return undefined;
  const s = (raw as Record<string, unknown>).startAt as Record<string, unknown> | undefined;
  const ok = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;
  return s && ok(s.layer) && ok(s.head) ? { layer: s.layer, head: s.head } : undefined;
}

/** Tests and the bench pass `{ modelPath }` to skip the pick. */
function modelPathArg(raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object' || raw instanceof vscode.Uri) return undefined;
  const p = (raw as Record<string, unknown>).modelPath;
  return typeof p === 'string' && p ? p : undefined;
}

export async function compareModels(d: CompareDeps, raw?: unknown): Promise<CompareOutcome> {
  try {
    return await runCompare(d, raw);
  } catch (e) {
    if (!(isLensError(e) && e.code === 'cancelled')) {
      d.showError(e);
      d.panel.markFailed(e instanceof Error ? e.message : String(e));
    }
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

async function runCompare(d: CompareDeps, raw: unknown): Promise<CompareOutcome> {
  let cur = d.current();
  if (cur === undefined) {
    if (!(await d.explain())) return { ok: false, error: 'nothing explained' };
    cur = d.current();
    if (cur === undefined) return { ok: false, error: 'nothing explained' };
  }
  const { text, input } = cur;
  const given = modelPathArg(raw);
  let dir: string;
  if (given) {
    dir = path.resolve(given);
    await inspectModel(dir, { isolate: true }); // a model type the engine does not read is named here, before anything opens
  } else {
    const picked = await pickModelFolder(d.pick, {
      title: 'DeBERTa Lens: Compare with Another Model',
      placeHolder: 'The model to put beside the current one (same text, side by side)',
    });
    if (!picked) return { ok: false, error: 'cancelled' };
    dir = picked.dir;
    if (picked.bundledSetting === undefined) await rememberModel(d.pick.context, dir);
  }
  const s = d.settings();
  const sB: LensSettings = { ...s, modelPath: path.resolve(dir) === path.resolve(d.pick.defaultDir) ? '' : dir };
  const controller = new AbortController();
  const t0 = performance.now();
  // Two models run: a failure names the one that failed. A BERT's own position limit is no setting to change.
  const run = async (model: LensModel, k: number, progress: vscode.Progress<{ message?: string }>) => {
    let result: ExplainResult;
    try {
      // Tokens and the wait first: a refusal comes before any run, and a long one says how long.
      const work = await model.estimate(input, controller.signal);
      const key = `${model.info.path}|${model.info.execution_provider}`;
      const rate = d.rates.rate(key, work.flops);
      const etaMs = work.flops / rate.flopsPerMs;
      progress.report({ message: `${model.info.name} (${k} of 2): ${explainStartText({ ...work, etaMs, measured: rate.measured })}` });
      const t0 = performance.now();
      result = await model.explain(input, controller.signal);
      d.rates.record(key, work.flops, result.timings?.run_ms ?? performance.now() - t0);
    } catch (e) {
      if (!isLensError(e) || e.code === 'cancelled') throw e;
      const message = `${model.info.name}: ${e.message}`;
      // The cut travels on: a refusal by a position table then offers another model, never the maxTokens setting.
      const named = e instanceof InputTooLongError ? new InputTooLongError(message, e.cut) : new LensError(message, e.code);
      throw explainError(named, s.maxTokens);
    }
    return { result, ms: result.timings?.total_ms ?? 0, decision: await decisionAfter(model, result) };
  };
  const pair = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'DeBERTa Lens: comparing', cancellable: true },
    async (progress, token) => {
      token.onCancellationRequested(() => controller.abort());
      progress.report({ message: `loading ${path.basename(d.models.modelDir(s))} and ${path.basename(d.other.modelDir(sB))}…` });
      const [mA, mB] = await Promise.all([
        d.models.get(s).catch((e: unknown) => {
          throw modelOpenError(e, s.modelPath);
        }),
        // The second model is no setting: its own message (naming the folder) says it all. The same folder
        // as the main model shares its open instance.
        d.models.matches(sB) ? d.models.get(sB) : d.other.get(sB),
      ]);
      // One after the other: each run already uses every core.
      const a = await run(mA, 1, progress);
      try {
        const b = await run(mB, 2, progress);
        return { a, b };
      } catch (e) {
        a.result.release();
        throw e;
      }
    },
  );
  if (controller.signal.aborted) {
    pair.a.result.release();
    pair.b.result.release();
    return { ok: false, error: 'cancelled' };
  }
  // From the panel's button or the palette alike, both sides start where the main panel is.
  const init = d.panel.show({ text, a: pair.a, b: pair.b, start: startAtArg(raw) ?? cur.at });
  const ms = performance.now() - t0;
  d.log(
    `compare: ${init.a.name} (${init.a.tokens.length} tokens) beside ${init.b.name} (${init.b.tokens.length} tokens) in ${ms.toFixed(0)} ms`,
  );
  if (!init.alignment.ok) {
    d.log(`compare: ${init.alignment.reason}`);
    void vscode.window.showWarningMessage(`DeBERTa Lens: ${init.alignment.reason}`);
  }
  return {
    ok: true,
    a: init.a.name,
    b: init.b.name,
    tokensA: init.a.tokens.length,
    tokensB: init.b.tokens.length,
    aligned: init.alignment.ok,
    reason: init.alignment.ok ? undefined : init.alignment.reason,
    sameTokens: init.sameTokens,
    ms,
  };
}
