// The host side of the Intervention and Head ranking tabs: runs the model on the explained text (an intervention
// rerun, a head-ranking sweep, the intervened run's attention), reports progress, cancels on request, and shapes
// the engine's answers for the view. No `vscode` here: the panel passes in how to show a result and save a file.
import type { AblateResult, ExplainResult, LensModel, SweepResult } from '../../engine';
import { isLensError } from '../../engine';
import {
  nothingToFollow,
  type DecisionInfo,
  type InterventionView,
  type RankingView,
  type RunLabel,
  type RunToHost,
  type RunToWebview,
} from '../../shared/interventions';
import { firstWordPosition, rankingCsv, ranksByLabel } from '../../shared/interventions';
import { decisionInfo, decisionView, MULTIPLE_CHOICE_UNRANKABLE, rankingTarget } from './decision-views';
import type { TrackWork } from '../common/work-progress';
import { PatchHost } from './patching';

/** What a run needs from the panel: the result shown, the plain run behind it, and how to show another one. */
export interface RunPanel {
  /** The result on screen, with the model that made it (absent after a reload: explain again). */
  current(): { id: number; text: string; result: ExplainResult; model?: LensModel; run?: RunLabel } | undefined;
  /** Shows `result` for the same text with `run` (undefined = the plain run); the Diff compares it with `previous`. */
  show(result: ExplainResult, run: RunLabel | undefined, previous: ExplainResult): void;
  /** The plain run's result behind what is shown (itself when the plain run is shown). */
  plain(): ExplainResult | undefined;
  post(m: RunToWebview): void;
  /** Asks where to save (or uses `target`) and writes `content`; resolves to the path, or undefined if cancelled. */
  save(format: 'json' | 'csv', content: string, target?: string, stem?: string): Promise<string | undefined>;
  log(line: string): void;
  /** A progress notification for a head ranking (stage, layer i of L, time left; its Cancel aborts the run). */
  track?: TrackWork;
}

/** Entry `k` of one of an engine result's lists; the engine keeps them in step, so a gap is its bug. */
function nth<T>(list: readonly T[], k: number, what: string): T {
  const v = list[k];
  if (v === undefined) throw new Error(`the engine's result has no ${what} #${k}`);
  return v;
}

export function interventionView(r: AblateResult, ms: number, text?: string): InterventionView {
  const tops = (p: AblateResult['before'][number]) => p.top.map((t) => ({ token: t.token, prob: t.prob }));
  const task =
    r.task && r.task_before && r.task_after
      ? { task: r.task, taskBefore: decisionView(r.task_before, r.tokens, text), taskAfter: decisionView(r.task_after, r.tokens, text) }
      : {};
  return {
    entries: r.ablation.entries,
    mode: r.ablation.mode,
    firstLayer: r.ablation.first_layer,
    layersRerun: r.ablation.layers_rerun,
    ...task,
    rows: r.before.map((b, k) => {
      const tracked = nth(r.tracked, k, 'followed token');
      return {
        position: b.position,
        token: nth(r.tokens, b.position, 'token').text,
        source: b.source,
        before: tops(b),
        after: tops(nth(r.after, k, 'position after')),
        kl: nth(r.kl, k, 'KL').kl,
        followed: {
          token: tracked.token,
          which: tracked.which,
          before: { logprob: tracked.before.logprob, rank: tracked.before.rank },
          after: { logprob: tracked.after.logprob, rank: tracked.after.rank },
        },
      };
    }),
    ms,
  };
}

export function rankingView(r: SweepResult, ms: number, answerText?: string): RankingView {
  const f = r.followed;
  const shape = {
    terms: r.terms,
    mode: r.mode,
    layers: r.emd ? 2 : r.model.layers,
    ...(r.emd ? { firstLayer: r.model.layers } : {}),
    heads: r.model.heads,
    position: r.position,
    token: nth(r.tokens, r.position, 'token').text,
    grid: r.grid,
  };
  if (r.task) {
    const target = rankingTarget(r, answerText);
    if (!target) throw new Error(`the engine's ${r.task} ranking has no target`);
    return {
      ...shape,
      task: r.task,
      target,
      ranking: r.ranking.map((c) => ({
        layer: c.layer,
        head: c.head,
        term: c.term,
        drop: c.drop,
        logitAfter: c.logit_after ?? NaN,
        ...(c.score_after === undefined ? {} : { scoreAfter: c.score_after }),
      })),
      ms,
    };
  }
  // The panel names no token target: a masked-LM ranking follows the token there, 'asked' never comes back.
  if (!f || f.which === 'asked') throw new Error('the ranking view follows a masked token or a task head’s decision');
  return {
    ...shape,
    followed: { token: f.token, which: f.which, logprob: f.before.logprob, rank: f.before.rank },
    ranking: r.ranking.map((c) => ({
      layer: c.layer,
      head: c.head,
      term: c.term,
      drop: c.drop,
      logprobAfter: c.logprob_after ?? NaN,
      rankAfter: c.rank_after ?? NaN,
      top1After: c.top1_after?.token ?? '',
    })),
    ms,
  };
}

/** The ranking as a JSON file: what the view shows, with the run's settings. */
export function rankingJson(r: RankingView): string {
  return `${JSON.stringify(r, null, 1)}\n`;
}

/** What the model read for `plain`: one text (`shown`), or a sentence pair and where its second text starts in the
 *  shown text (a typed [SEP] or two selections). */
export function explainedInput(plain: ExplainResult, shown: string): { text: string; pair?: string; pairOffset?: number } {
  return plain.pair !== undefined && plain.text !== undefined
    ? { text: plain.text, pair: plain.pair, ...(plain.pairOffset === undefined ? {} : { pairOffset: plain.pairOffset }) }
    : { text: shown };
}

export class RunHost {
  private readonly running = new Map<number, AbortController>();
  /** The last finished ranking (what Export writes). */
  lastRanking: RankingView | undefined;
  /** Per plain result: what its checkpoint decides (asked once; the tabs ask on every render). */
  private readonly decisions = new WeakMap<ExplainResult, DecisionInfo>();
  /** The Patching tab's traces (they share this host's cancel map). */
  readonly patching: PatchHost;

  constructor(private readonly panel: RunPanel) {
    this.patching = new PatchHost(panel, this.running, explainedInput);
  }

  /** Handles one run message; the answer goes back as `runResult` (errors included), never as a throw. */
  async handle(m: RunToHost): Promise<void> {
    if (m.type === 'cancelRun') {
      this.running.get(m.id)?.abort();
      return;
    }
    if (m.type === 'patch' || m.type === 'patchSetup' || m.type === 'exportPatch') return this.patching.handle(m);
    if (m.type === 'exportRanking') {
      await this.exportRanking(m.format).catch((e: unknown) =>
        this.panel.log(`ranking export failed: ${e instanceof Error ? e.message : String(e)}`),
      );
      return;
    }
    const cur = this.panel.current();
    const fail = (id: number, error: string, cancelled = false) => this.panel.post({ type: 'runResult', id, ok: false, error, cancelled });
    if (m.type === 'showRun') {
      if (!cur || cur.id !== m.resultId) return;
      await this.showRun(m.run, m.entries, m.mode).catch((e: unknown) =>
        this.panel.log(`showing the run failed: ${e instanceof Error ? e.message : String(e)}`),
      );
      return;
    }
    if (!cur || cur.id !== m.resultId) return fail(m.id, 'this result has been replaced: run it again');
    if (!cur.model) return fail(m.id, 'the model behind this view is closed (a reload or a setting changed): explain again, then run this');
    const controller = new AbortController();
    this.running.set(m.id, controller);
    const t0 = performance.now();
    // Every rerun uses the explained input: a sentence pair's two texts, not the selection that held both.
    const input = explainedInput(this.panel.plain() ?? cur.result, cur.text);
    try {
      if (m.type === 'decision') {
        this.panel.post({ type: 'runResult', id: m.id, ok: true, decision: await this.decision(cur.model, cur.result, controller.signal) });
      } else if (m.type === 'intervene') {
        const r = await cur.model.ablate(
          { ...input, ablate: m.entries, mode: m.mode, top: m.top, positions: m.position === null ? undefined : [m.position] },
          controller.signal,
        );
        this.panel.post({
          type: 'runResult',
          id: m.id,
          ok: true,
          intervention: interventionView(r, performance.now() - t0, input.pair === undefined ? input.text : undefined),
        });
      } else {
        const info = await this.decision(cur.model, cur.result, controller.signal);
        if (!info.task || info.unrankable) return fail(m.id, info.unrankable ?? 'nothing to rank on this checkpoint');
        // A masked-LM ranking follows the chosen token (or the first [MASK]); token classification one token
        // (default: the first word); a sequence classifier its [CLS] row and a QA head its answer span.
        const position =
          info.task === 'masked-lm'
            ? (m.position ?? undefined)
            : info.task === 'token-classification'
              ? (m.position ?? firstWordPosition(cur.result.tokens))
              : undefined;
        const target = ranksByLabel(info.task) && m.label !== undefined ? { label: m.label } : undefined;
        const tracker = this.panel.track?.('DeBERTa Lens: ranking heads', controller);
        const layers = cur.model.info.layers;
        const onProgress = (p: { done: number; total: number; layer: number }) => {
          this.panel.post({ type: 'runProgress', id: m.id, ...p });
          tracker?.report({ stage: `removing each head’s ${m.terms.join('/')} alone`, unit: 'reruns', layers, ...p });
        };
        const r = await cur.model
          .sweep(
            {
              text: input.text,
              pair: input.pair,
              terms: m.terms,
              mode: m.mode,
              position,
              target,
              onProgress,
              ...(m.emd ? { emd: true } : {}),
            },
            controller.signal,
          )
          .finally(() => tracker?.done());
        const answer = info.decision?.kind === 'span' ? (info.decision.answer?.text ?? undefined) : undefined;
        this.lastRanking = rankingView(r, performance.now() - t0, answer);
        this.panel.post({ type: 'runResult', id: m.id, ok: true, ranking: this.lastRanking });
      }
    } catch (e) {
      const cancelled = isLensError(e) && e.code === 'cancelled';
      fail(m.id, cancelled ? 'cancelled' : e instanceof Error ? e.message : String(e), cancelled);
    } finally {
      this.running.delete(m.id);
    }
  }

  /** What the checkpoint decides on the plain run's input (its task head's output read from the kept state). */
  private async decision(model: LensModel, shown: ExplainResult, signal: AbortSignal): Promise<DecisionInfo> {
    const base = this.panel.plain() ?? shown;
    const known = this.decisions.get(base);
    if (known) return known;
    let info: DecisionInfo;
    try {
      info = decisionInfo(await model.predictExplained(base, { top: 1 }, signal), base.pair === undefined ? base.text : undefined);
    } catch (e) {
      if (isLensError(e) && e.code === 'cancelled') throw e;
      // A masked-LM checkpoint still ranks (the sweep runs its own forward pass) when the kept state cannot answer;
      // a multiple-choice head (it scores every choice, one run each) ranks nothing, but Patching follows the choice
      // on screen.
      const heads = model.summary.prediction_heads;
      info =
        heads.includes('cls.predictions') || heads.includes('lm_predictions.lm_head')
          ? { task: 'masked-lm' }
          : model.summary.task_head === 'multiple-choice'
            ? { task: 'multiple-choice', unrankable: MULTIPLE_CHOICE_UNRANKABLE }
            : nothingToFollow(`Nothing to rank or patch here: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.decisions.set(base, info);
    return info;
  }

  /** The intervened run's attention in every tab, or the plain run again. */
  private async showRun(run: 'ablated' | 'plain', entries: string, mode: 'zero' | 'mean'): Promise<void> {
    const cur = this.panel.current();
    const plain = this.panel.plain();
    if (!cur || !plain) return;
    if (run === 'plain') {
      if (cur.run) this.panel.show(plain, undefined, cur.result);
      return;
    }
    if (!cur.model) throw new Error('the model behind this view is closed: explain again');
    const ablated = await cur.model.explainAblated({ ...explainedInput(plain, cur.text), ablate: entries, mode });
    this.panel.show(ablated, { entries: entries.split(',').map((s) => s.trim()), mode }, plain);
  }

  /** Writes the last ranking (`target`: tests and scripts; else a save dialog). */
  async exportRanking(format: 'json' | 'csv', target?: string): Promise<string | undefined> {
    const r = this.lastRanking;
    if (!r) throw new Error('no head ranking yet: run one in the Head ranking tab first');
    const file = await this.panel.save(format, format === 'csv' ? rankingCsv(r) : rankingJson(r), target);
    if (file) this.panel.log(`exported the head ranking (${format}) to ${file}`);
    return file;
  }

  /** Cancels every run in flight (the panel closed, a new explain replaced the text). */
  cancelAll(): void {
    for (const c of this.running.values()) c.abort();
  }
}
