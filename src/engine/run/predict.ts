// Fill-mask and replaced-token detection: the encoder's last hidden state through the checkpoint's own heads.
import type { PositionPrediction, PredictInput, PredictResult, RtdScore } from '../api';
import { emdLengthProblem, emdPlan } from '../checkpoint/emd';
import { noHeadMessage } from '../checkpoint/heads';
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import { HeadOutput } from '../graph/head-graph';
import type { ExplainResult } from '../result/explain-result';
import type { Token } from '../types';
import { prepareInput } from './input';
import { checkTop, nameTokens, positionsToPredict, readPrediction, readPredictions } from './prediction-read';
import type { RunContext } from './run-context';
import { predictTask, predictTaskExplained, predictTaskOnHidden } from './task-predict';

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export async function predictWith(model: RunContext, input: PredictInput, signal?: AbortSignal): Promise<PredictResult> {
  const t0 = performance.now();
  const heads = model.heads.heads;
  const ck = model.checkpoint;
  if (!heads.mlm && !heads.rtd) {
    if (heads.task || heads.taskProblem) return predictTask(model, input, signal);
    throw new LensError(noHeadMessage(ck), 'unsupported');
  }
  if (input.choices)
    throw new LensError('choices are for a multiple-choice head; this checkpoint has masked-LM or replaced-token-detection heads');
  const prepared = await prepareInput(model, { text: input.text, pair: input.pair, ids: input.ids }, signal);
  const { maskId, inputMasks, asked } = positionsToPredict(model, prepared.ids, input.positions);
  if (!heads.rtd && inputMasks.length === 0 && asked.length === 0) {
    const why = maskId === undefined ? `${ck.dir} has no tokenizer, so [MASK] ids are unknown` : 'the input has no [MASK] token';
    throw new LensError(
      `nothing to predict: ${why} and no positions were given; write [MASK] where a word should be predicted, or name positions to mask (--positions 3,7)`,
    );
  }
  return predictPrepared(model, prepared, input, undefined, t0, signal, input.emd !== false);
}

/** Whether the masked-LM rows go through the Enhanced Mask Decoder's passes, and the one line on the decoder. */
function decoderOf(model: RunContext, n: number, wanted: boolean): { passes: boolean; decoder: 'emd' | 'plain'; note?: string } {
  if (!wanted) return { passes: false, decoder: 'plain' };
  const plan = emdPlan(model.checkpoint, model.heads.heads);
  if (plan.kind === 'last-layer') return { passes: false, decoder: 'emd', note: plan.note };
  if (plan.kind === 'plain') return { passes: false, decoder: 'plain', ...(plan.note ? { note: plan.note } : {}) };
  const tooLong = emdLengthProblem(model.checkpoint, plan.rows, n);
  return tooLong ? { passes: false, decoder: 'plain', note: tooLong } : { passes: true, decoder: 'emd' };
}

/**
 * Fill-mask on the tokens of an explain result of this model: the [MASK]s and the RTD scores read the last hidden
 * state the explain kept (the heads only, no encoder run); each asked position is masked and run once more.
 */
export async function predictExplained(
  model: RunContext,
  result: ExplainResult,
  input: Pick<PredictInput, 'positions' | 'top'>,
  signal?: AbortSignal,
): Promise<PredictResult> {
  const t0 = performance.now();
  const heads = model.heads.heads;
  if (!heads.mlm && !heads.rtd && !heads.task && !heads.taskProblem) throw new LensError(noHeadMessage(model.checkpoint), 'unsupported');
  if (result.model.checkpoint_hash !== model.info.checkpoint_hash)
    throw new LensError(`this result was explained with ${result.model.name}, not ${model.info.name}: explain again`, 'invalid-input');
  if (result.released) throw new LensError('this result was released; explain again', 'runtime');
  if (!heads.mlm && !heads.rtd) return predictTaskExplained(model, result, input.positions);
  const prepared = { ids: result.inputIds, tokens: result.tokens, tokenTypes: result.tokenTypeIds };
  return predictPrepared(model, prepared, input, result.lastHidden, t0, signal);
}

/** What predict gives for prepared tokens whose last hidden state is known (a patched run's): every [MASK], RTD, or
 *  the task head's output, read off `hidden` with no encoder run. */
export function predictOnHidden(
  model: RunContext,
  prepared: { ids: number[]; tokens: Token[]; tokenTypes?: number[]; pairOffset?: number },
  hidden: Float32Array,
  pair: string | undefined,
  signal?: AbortSignal,
): Promise<PredictResult> {
  const heads = model.heads.heads;
  if (!heads.mlm && !heads.rtd) return Promise.resolve(predictTaskOnHidden(model, prepared, hidden, pair));
  return predictPrepared(model, prepared, {}, hidden, performance.now(), signal);
}

/** The head runs on prepared tokens; `hidden`, when given, is the last hidden state of those tokens as they are. */
async function predictPrepared(
  model: RunContext,
  prepared: { ids: number[]; tokens: Token[]; tokenTypes?: number[] },
  input: Pick<PredictInput, 'positions' | 'top'>,
  hidden: Float32Array | undefined,
  t0: number,
  signal?: AbortSignal,
  emd = false,
): Promise<PredictResult> {
  const heads = model.heads.heads;
  const { ids, tokens, tokenTypes } = prepared;
  const n = ids.length;
  // A kept last hidden state (an explain's, a patched run's) is read by the plain head: the EMD needs the state
  // entering the last layer, which those callers do not hand over.
  const decoder = decoderOf(model, n, emd && hidden === undefined && heads.mlm !== undefined);
  const k = checkTop(model, input.top);
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, input.positions);
  const t1 = performance.now();
  let forwardMs = 0,
    headMs = 0;

  // Without a kept state, the encoder and the heads run in one message to the encoder's process.
  const runOnce = async (runIds: number[], positions: number[], targets: number[], rtd: boolean, kept?: Float32Array) => {
    if (kept) {
      const out = await model.heads.run(kept, n, positions, targets, k, rtd, signal);
      headMs += out.ms;
      return out;
    }
    const out = await model.heads.runAfterForward(runIds, tokenTypes, positions, targets, k, rtd, signal, decoder.passes);
    forwardMs += out.forwardMs;
    headMs += out.ms;
    return out;
  };

  const predictions: PositionPrediction[] = [];
  let rtd: RtdScore[] | undefined;
  const mlmMasks = heads.mlm ? inputMasks : [];
  if (mlmMasks.length > 0 || heads.rtd) {
    const first = await runOnce(
      ids,
      mlmMasks,
      mlmMasks.map((p) => at(ids, p, 'position')),
      true,
      hidden,
    );
    readPredictions(first.read, mlmMasks, k).forEach(({ top }, r) =>
      predictions.push({ position: at(mlmMasks, r, 'row'), source: 'input', top }),
    );
    if (heads.rtd) {
      // The EMD graph gives the masked-LM rows only: the RTD head reads the last hidden state of a plain run.
      const plain =
        decoder.passes && mlmMasks.length > 0 ? await model.heads.runAfterForward(ids, tokenTypes, [], [], k, true, signal) : first;
      const logits = plain.read(HeadOutput.rtdLogits);
      rtd = Array.from(logits, (logit, i) => ({ position: i, token: at(tokens, i, 'token').text, logit, prob: sigmoid(logit) }));
    }
  }
  for (const p of toMask) {
    const masked = ids.slice();
    masked[p] = maskId!;
    const id = at(ids, p, 'position');
    const out = await runOnce(masked, [p], [id], false);
    const { top, target } = readPrediction(out.read, p, k);
    predictions.push({ position: p, source: 'masked', top, original: { ...target, id, token: `#${id}` } });
  }
  predictions.sort((a, b) => a.position - b.position);
  await nameTokens(
    model,
    predictions.flatMap((p) => [...p.top, ...(p.original ? [p.original] : [])]),
    signal,
  );
  return {
    task: heads.mlm ? 'masked-lm' : 'replaced-token-detection',
    model: { ...model.info, execution_provider: model.session.provider },
    mlm_head: heads.mlm?.layout ?? null,
    rtd_head: heads.rtd !== undefined,
    mask_id: maskId ?? null,
    input_ids: ids,
    tokens,
    predictions,
    ...(rtd ? { rtd } : {}),
    decoder: decoder.decoder,
    ...(decoder.note ? { decoder_note: decoder.note } : {}),
    timings: {
      tokenize_ms: t1 - t0,
      forward_ms: forwardMs,
      head_ms: headMs,
      total_ms: performance.now() - t0,
      forward_reused: hidden !== undefined && (mlmMasks.length > 0 || !!heads.rtd),
    },
  };
}
