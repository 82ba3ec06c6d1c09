// Fill-mask for the panel and the editor hover: the [MASK]s of each explained result (the heads run on the hidden
// state the explain kept, after the first heatmap is on its way), and "what would the model put here?" for any
// other token (masked, one more forward pass). Keeps the answers of the result on screen and sends them to the
// view again when its page reloads. Pure (no `vscode`): the unit tests run it on the real engine.
import { isLensError, type ExplainResult, type LensModel, LensError, type PositionPrediction, type PredictResult } from '../../engine';
import type { Decision } from '../../shared/decision';
import { decisionOf } from '../common/decision-of';
import { inputOf } from './emd-passes';
import { escapeMarkdown as escapeMd } from '../../shared/markup-text';
import {
  type FillMask,
  formatProb,
  originalLine,
  type PositionPredictions,
  predictedLabel,
  type PredictionsToWebview,
  type TokenPrediction,
} from '../../shared/predictions';

export interface PredictionsHost {
  /** Posts to the view (dropped while the view is not loaded: `resend` follows its init). */
  post(m: PredictionsToWebview): void;
  /** The debertaLens.predictionTopK setting. */
  topK(): number;
  log(line: string): void;
  /** A result's task-head decision is known (undefined: the checkpoint has none): the editor marks it. */
  decided?(resultId: number, decision: Decision | undefined): void;
}

/** No [MASK] written in the selection: what the panel says instead of predictions. */
export const NO_MASK_HINT =
  'No [MASK] in the selection: write [MASK] where a word should be predicted, or pick a token and ask what the model would put there.';

function positionPredictions(p: PositionPrediction): PositionPredictions {
  const strip = (t: { id: number; token: string; logit: number; prob: number }) => ({
    id: t.id,
    token: t.token,
    logit: t.logit,
    prob: t.prob,
  });
  return {
    position: p.position,
    source: p.source,
    top: p.top.map(strip),
    ...(p.original ? { original: { ...strip(p.original), rank: p.original.rank } } : {}),
  };
}

/** A multiple-choice head's scores over every choice (one run each), and the choice whose run is on screen. */
export interface ChoiceRuns {
  predict: PredictResult;
  shown: number;
}

/** What the panel shows for a result's fill-mask (and a task head's decision; `shown`: the multiple choice on screen). */
export function fillMaskOf(r: PredictResult, k: number, shown?: number): FillMask {
  const decision = decisionOf(r, shown);
  return {
    state: 'ready',
    k,
    mlmHead: r.mlm_head,
    masks: r.predictions.filter((p) => p.source === 'input').map(positionPredictions),
    ...(r.rtd ? { rtd: r.rtd.map((s) => s.prob) } : {}),
    ...(decision ? { decision } : {}),
  };
}

/** The EMD's fill-mask (`emd`, predict with the decoder) with the plain head's (`plain`, on the kept hidden state)
 *  beside each position; the plain one alone when the EMD did not decode (its note says why). */
export function withPlain(emd: PredictResult, plain: PredictResult): PredictResult & { plainBeside?: Map<number, PositionPrediction> } {
  if (emd.decoder !== 'emd' || emd.decoder_note) return { ...plain, ...(emd.decoder_note ? { decoder_note: emd.decoder_note } : {}) };
  return { ...emd, plainBeside: new Map(plain.predictions.map((p) => [p.position, p])) };
}

/** A position's predictions with the plain head's beside them (when the EMD decoded). */
function besidePlain(p: PositionPrediction, plain: PositionPrediction | undefined): PositionPredictions {
  const out = positionPredictions(p);
  if (!plain) return out;
  const q = positionPredictions(plain);
  return { ...out, plain: { top: q.top, ...(q.original ? { original: q.original } : {}) } };
}

/** Fill-mask through the EMD with the plain head beside it. */
export function fillMaskWithPlain(emd: PredictResult, plain: PredictResult, k: number): FillMask {
  const r = withPlain(emd, plain);
  const base = fillMaskOf(r, k);
  if (base.state !== 'ready') return base;
  const beside = r.plainBeside;
  return {
    ...base,
    ...(beside
      ? {
          decoder: 'emd' as const,
          masks: r.predictions.filter((p) => p.source === 'input').map((p) => besidePlain(p, beside.get(p.position))),
        }
      : { decoder: 'plain' as const }),
    ...(r.decoder_note ? { decoderNote: r.decoder_note } : {}),
  };
}

/** Whether the panel decodes this model's [MASK]s through the EMD's passes (and shows the plain head beside). */
function decodesWithEmd(model: LensModel): boolean {
  return model.summary.emd === 'passes';
}

/** A failure as the panel says it: a checkpoint without the head is "nothing to show", anything else an error. */
function failure(e: unknown): { state: 'none' | 'error'; message: string } {
  const message = e instanceof Error ? e.message : String(e);
  return { state: isLensError(e) && e.code === 'unsupported' ? 'none' : 'error', message };
}

interface Current {
  resultId: number;
  model: LensModel;
  result: ExplainResult;
  /** Set when `result` is an intervened run of this plain explain's text. */
  plain?: ExplainResult;
  k: number;
  fillMask: FillMask;
  done: Promise<FillMask>;
  tokens: Map<number, { prediction: TokenPrediction; done: Promise<TokenPrediction> }>;
  abort: AbortController;
  choices?: ChoiceRuns;
}

export class PanelPredictions {
  private current: Current | undefined;

  constructor(private readonly host: PredictionsHost) {}

  /** A new result is on screen: its fill-mask starts now and is posted when ready. Resolves to what was posted.
   *  `choices`: a multiple-choice head's scores, already run for every choice (the card shows them). */
  start(model: LensModel, result: ExplainResult, resultId: number, plain?: ExplainResult, choices?: ChoiceRuns): Promise<FillMask> {
    this.current?.abort.abort();
    const k = this.host.topK();
    const abort = new AbortController();
    const cur: Current = {
      resultId,
      model,
      result,
      plain,
      k,
      fillMask: { state: 'pending' },
      done: Promise.resolve({ state: 'pending' }),
      tokens: new Map(),
      abort,
      ...(choices ? { choices } : {}),
    };
    this.current = cur;
    this.post(cur, { type: 'fillMask', resultId, fillMask: cur.fillMask });
    const t0 = performance.now();
    // An intervened run is predicted from its own last hidden state only: without one the heads would read a plain
    // forward pass and show predictions the intervention never made.
    const predicted = choices
      ? Promise.resolve(choices.predict)
      : plain && !result.lastHidden
        ? Promise.reject(
            new LensError(
              'this intervened run kept no last hidden state to predict from: the Intervention tab lists its predictions',
              'unsupported',
            ),
          )
        : model.predictExplained(result, { top: k }, abort.signal);
    // The EMD needs the state entering the last layer, which the explain does not keep: one more forward pass.
    const emd =
      !choices && !plain && decodesWithEmd(model)
        ? predicted.then(async (r) =>
            r.predictions.length > 0 ? await model.predict({ ...inputOf(result), top: k, emd: true }, abort.signal) : undefined,
          )
        : Promise.resolve(undefined);
    cur.done = Promise.all([predicted, emd])
      .then(
        ([r, e]): FillMask => {
          if (e) {
            this.host.log(
              `fill-mask through the Enhanced Mask Decoder (${e.decoder}) in ${(performance.now() - t0).toFixed(1)} ms, plain head beside`,
            );
            return fillMaskWithPlain(e, r, k);
          }
          const masks = r.predictions.length;
          this.host.log(
            `${r.classification || r.token_classification || r.question_answering ? `${r.task} head, ` : ''}fill-mask: ${masks} [MASK]${masks === 1 ? '' : 's'}${r.rtd ? ', replaced-token detection' : ''} in ${(performance.now() - t0).toFixed(1)} ms${r.timings.forward_reused ? ' (heads on the explain’s hidden state)' : ''}`,
          );
          return { ...fillMaskOf(r, k, choices?.shown), ...(plain ? { intervened: true } : {}) };
        },
        (e: unknown): FillMask => failure(e),
      )
      .then((fillMask) => {
        cur.fillMask = fillMask;
        this.post(cur, { type: 'fillMask', resultId, fillMask });
        if (this.current === cur) this.host.decided?.(resultId, fillMask.state === 'ready' ? fillMask.decision : undefined);
        return fillMask;
      });
    return cur.done;
  }

  /** The top-k setting changed: the result on screen gets its fill-mask again (the questions asked are dropped). */
  refresh(): Promise<FillMask> | undefined {
    const cur = this.current;
    return cur ? this.start(cur.model, cur.result, cur.resultId, cur.plain, cur.choices) : undefined;
  }

  /**
   * Another run of the same text is on screen (an intervention, or the plain run again): its [MASK]s are predicted
   * from that run's own last hidden state. Asking about another token stays with the plain run.
   */
  follow(result: ExplainResult, resultId: number): Promise<FillMask> | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    const plain = cur.plain ?? cur.result;
    return this.start(cur.model, result, resultId, result === plain ? undefined : plain);
  }

  /** The view (re)loaded and showed result `resultId`: send it everything known for that result. */
  resend(resultId: number): void {
    const cur = this.current;
    if (!cur || cur.resultId !== resultId) return;
    this.host.post({ type: 'fillMask', resultId, fillMask: cur.fillMask });
    for (const { prediction } of cur.tokens.values()) this.host.post({ type: 'tokenPrediction', resultId, prediction });
  }

  /** Result `resultId`'s task-head decision, once known (the JSON export carries it). */
  decisionOf(resultId: number): Decision | undefined {
    const cur = this.current;
    return cur?.resultId === resultId && cur.fillMask.state === 'ready' ? cur.fillMask.decision : undefined;
  }

  /** The result on screen, if any (the editor command asks about its tokens). */
  get resultId(): number | undefined {
    return this.current?.resultId;
  }

  /**
   * "What would the model put here?" for token `i`: a [MASK] of the text answers from the fill-mask; any other
   * token is masked and run once more. Posts pending, then the answer; resolves to the answer.
   */
  predictToken(resultId: number, i: number): Promise<TokenPrediction> {
    const cur = this.current;
    if (!cur || cur.resultId !== resultId)
      return Promise.resolve({ position: i, state: 'error', message: 'this result has been replaced: explain again' });
    const known = cur.tokens.get(i);
    if (known && known.prediction.state !== 'error') {
      this.post(cur, { type: 'tokenPrediction', resultId, prediction: known.prediction });
      return known.done;
    }
    const refuse = this.refusal(cur, i);
    const send = (prediction: TokenPrediction) => {
      const entry = cur.tokens.get(i);
      if (entry) entry.prediction = prediction;
      this.post(cur, { type: 'tokenPrediction', resultId, prediction });
      return prediction;
    };
    const entry = {
      prediction: { position: i, state: 'pending' } as TokenPrediction,
      done: Promise.resolve<TokenPrediction>({ position: i, state: 'pending' }),
    };
    cur.tokens.set(i, entry);
    if (refuse) {
      entry.done = Promise.resolve(send({ position: i, state: 'error', message: refuse }));
      return entry.done;
    }
    send(entry.prediction);
    entry.done = this.runToken(cur, i).then(send);
    return entry.done;
  }

  /** What is known at token `i` of the result (a [MASK], or a token asked for), waiting for the fill-mask if it runs. */
  async at(resultId: number, i: number): Promise<PositionPredictions | undefined> {
    const cur = this.current;
    if (!cur || cur.resultId !== resultId) return undefined;
    const asked = cur.tokens.get(i)?.prediction;
    if (asked?.state === 'ready') return asked.prediction;
    const fm = await cur.done;
    return fm.state === 'ready' ? fm.masks.find((m) => m.position === i) : undefined;
  }

  /** The panel closed: stop what runs and forget the result. */
  clear(): void {
    this.current?.abort.abort();
    this.current = undefined;
  }

  /** Why token `i` cannot be predicted, or undefined when it can. */
  private refusal(cur: Current, i: number): string | undefined {
    const t = cur.result.tokens[i];
    if (!t) return `token #${i} does not exist: this result has tokens 0…${cur.result.n - 1}`;
    if (cur.plain)
      return `this is an intervened run: “what would the model put here?” masks #${i} in the plain model, so go back to the plain run first`;
    if (cur.fillMask.state === 'none') return cur.fillMask.message;
    if (cur.fillMask.state === 'ready' && cur.fillMask.mlmHead === null)
      return `${cur.result.model.name} has no masked-LM head (only replaced-token detection): it cannot say which token belongs at #${i}`;
    // A written [MASK] is special too, but it is what fill-mask is for.
    if (t.special && t.text !== '[MASK]')
      return `#${i} ${t.text} is a special token the model adds around the text: pick a token of the text`;
    return undefined;
  }

  private async runToken(cur: Current, i: number): Promise<TokenPrediction> {
    try {
      const fm = await cur.done;
      const mask = fm.state === 'ready' ? fm.masks.find((m) => m.position === i) : undefined;
      if (mask) return { position: i, state: 'ready', prediction: mask };
      const t0 = performance.now();
      const r = await cur.model.predictExplained(cur.result, { positions: [i], top: cur.k }, cur.abort.signal);
      const p = r.predictions.find((q) => q.position === i);
      if (!p) return { position: i, state: 'error', message: `no prediction came back for #${i}` };
      // Through the EMD too where the fill-mask went through it: the same decoder at every position of the panel.
      if (fm.state === 'ready' && fm.decoder === 'emd') {
        const e = await cur.model.predict({ ...inputOf(cur.result), positions: [i], top: cur.k, emd: true }, cur.abort.signal);
        const q = e.predictions.find((x) => x.position === i);
        if (q && e.decoder === 'emd' && !e.decoder_note) {
          this.host.log(`predicted #${i} (masked, through the EMD and the plain head) in ${(performance.now() - t0).toFixed(1)} ms`);
          return { position: i, state: 'ready', prediction: besidePlain(q, p) };
        }
      }
      this.host.log(`predicted #${i} (masked, one more forward pass) in ${(performance.now() - t0).toFixed(1)} ms`);
      return { position: i, state: 'ready', prediction: positionPredictions(p) };
    } catch (e) {
      return { position: i, ...failure(e), state: 'error' };
    }
  }

  /** Posts only while `cur` is still the result on screen. */
  private post(cur: Current, m: PredictionsToWebview): void {
    if (this.current === cur) this.host.post(m);
  }
}

/** The editor hover's text for a predicted position: a small table of the top tokens and their probabilities. */
export function predictionMarkdown(p: PositionPredictions, tokenText: string): string {
  const what = p.source === 'input' ? `\\[MASK\\] #${p.position}` : `“${escapeMd(predictedLabel(tokenText))}” #${p.position}, masked`;
  const rows = p.top.map((t, r) => `| ${r + 1} | ${escapeMd(predictedLabel(t.token))} | ${formatProb(t.prob)} |`);
  const original = originalLine(p);
  return [
    `**DeBERTa Lens** · what the model puts at ${what}`,
    '',
    '| # | token | probability |',
    '|---:|---|---:|',
    ...rows,
    ...(original ? ['', `the token that stood there: ${escapeMd(original)}`] : []),
  ].join('\n');
}
