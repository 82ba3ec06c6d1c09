// "Which words made it say that?" for the panel: the explained input's tokens (or its words, as the panel's merge
// joins them) taken out one at a time (masked, and removed) in batched runs of the model, each scored by how much
// the followed logit drops; progress and cancel, the outcome posted to the view and handed to the editor. One attribution at a time; a new result cancels it. Pure (no
// `vscode`): the unit tests run it on the real engine.
import type { ExplainResult, LensModel, OcclusionResult, SweepTarget } from '../../engine';
import type { DecisionTarget } from '../../shared/decision';
import type { Attribution, OcclusionMerge, OcclusionMessage } from '../../shared/occlusion';
import { groupWords } from '../../analysis/words';
import { offsetText } from '../common/result-shape';
import type { TrackWork } from '../common/work-progress';

export interface OcclusionHost {
  post(m: OcclusionMessage): void;
  log(line: string): void;
  /** The attribution of result `resultId` is known (scores by the mask method, else removal), or cleared. */
  shown?(resultId: number, scores: (number | null)[] | undefined, words?: boolean): void;
  /** A progress notification (stage, count, time left; its Cancel stops the attribution). */
  track?: TrackWork;
}

/** What a person reads as the followed value. */
export function followedLabel(r: Pick<OcclusionResult, 'target'>): string {
  const t = r.target;
  switch (t.kind) {
    case 'label':
      return `“${t.label}” logit${t.position !== undefined ? ` at #${t.position}` : ''}`;
    case 'span':
      return 'the answer span’s start + end logit';
    case 'token':
      return `log p(“${t.token}”) at #${t.position}`;
  }
}

export class PanelOcclusion {
  private running: { resultId: number; abort: AbortController } | undefined;
  private last: { resultId: number; attribution: Attribution } | undefined;

  constructor(private readonly host: OcclusionHost) {}

  /** Attributes result `resultId`'s decision (`target`) to its tokens — or, with `merge`, to its words, each taken out
   *  whole (the groups the panel's merge shows); resolves to what was posted last. */
  async start(
    model: LensModel,
    result: ExplainResult,
    resultId: number,
    target: DecisionTarget,
    merge?: OcclusionMerge,
  ): Promise<Attribution> {
    this.cancel();
    const abort = new AbortController();
    this.running = { resultId, abort };
    const post = (attribution: Attribution) => {
      // A newer attribution took over: this one's news belongs to nobody.
      if (this.running && this.running.abort !== abort) return attribution;
      this.last = { resultId, attribution };
      this.host.post({ type: 'occlusion', resultId, attribution });
      return attribution;
    };
    post({ state: 'running', done: 0, total: 0 });
    const sweepTarget: SweepTarget | undefined = 'label' in target ? { label: target.label } : undefined;
    const t0 = performance.now();
    let total = 0;
    const tracker = this.host.track?.('DeBERTa Lens: which tokens made the decision', abort);
    try {
      if (result.text === undefined) throw new Error('this result was explained from ids: there is no text to take tokens out of');
      const groups = merge
        ? groupWords(result.tokens, offsetText(result), merge)
            .filter((g) => !g.special)
            .map((g) => g.pieces)
        : undefined;
      const r = await model.occlude(
        {
          text: result.text,
          ...(result.pair !== undefined ? { pair: result.pair } : {}),
          ...(sweepTarget ? { target: sweepTarget } : {}),
          ...(groups ? { groups } : {}),
          ...('position' in target && target.position !== undefined ? { position: target.position } : {}),
          onProgress: (p) => {
            total = p.total;
            post({ state: 'running', done: p.done, total: p.total });
            const how = p.method === 'mask' ? 'masking each token alone' : 'removing each token alone';
            tracker?.report({ stage: how, unit: 'variants', done: p.done, total: p.total });
          },
        },
        abort.signal,
      );
      const ms = performance.now() - t0;
      this.host.log(
        `occlusion${groups ? ` by ${merge}` : ''}: ${r.timings.variants} variants in ${r.timings.runs} runs of ≤ ${r.timings.batch_size} in ${ms.toFixed(0)} ms`,
      );
      const out = post({
        state: 'ready',
        followed: followedLabel(r),
        before: r.before,
        ...(r.methods.mask ? { mask: r.methods.mask.scores } : {}),
        ...(r.methods.remove ? { remove: r.methods.remove.scores } : {}),
        ...(merge && groups ? { words: { merge, groups } } : {}),
        ms,
      });
      this.host.shown?.(resultId, r.methods.mask?.scores ?? r.methods.remove?.scores, !!groups);
      return out;
    } catch (e) {
      const message = abort.signal.aborted ? 'cancelled' : e instanceof Error ? e.message : String(e);
      this.host.log(`occlusion: ${message}${total ? ` (after ${total} variants planned)` : ''}`);
      return post({ state: 'error', message });
    } finally {
      tracker?.done();
      if (this.running?.abort === abort) this.running = undefined;
    }
  }

  /** Stops the attribution in flight (the view's Cancel, a new result, the panel closing). */
  cancel(): void {
    this.running?.abort.abort();
    this.running = undefined;
  }

  /** The view shows result `resultId` (new, or again after a reload): an attribution of another result stops, one of
   *  this result is sent again. */
  resend(resultId: number): void {
    if (this.running && this.running.resultId !== resultId) this.cancel();
    if (this.last?.resultId === resultId) this.host.post({ type: 'occlusion', resultId, attribution: this.last.attribution });
  }

  /** The last attribution of result `resultId` (the JSON export carries it). */
  of(resultId: number): Attribution | undefined {
    return this.last?.resultId === resultId ? this.last.attribution : undefined;
  }

  /** A new result replaced the one attributed. */
  clear(): void {
    this.cancel();
    this.last = undefined;
  }
}
