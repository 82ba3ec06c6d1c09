// predict on a checkpoint with a fine-tuned task head: one forward pass (one per choice for multiple choice), then
// the head in JS on the last hidden state (./task-head-run.ts); or, after an explain, the head on the state the
// explain kept, with no second forward pass.
import type { PredictInput, PredictResult, TaskOutput } from '../api';
import type { TaskHead } from '../checkpoint/heads';
import { LensError } from '../errors';
import type { ExplainResult } from '../result/explain-result';
import type { Token } from '../types';
import { forwardOnly, prepareInput } from './input';
import type { RunContext } from './run-context';
import { choiceLogit, outputOf, requireTaskHead, taskWeights } from './task-head-run';
import { argmax, softmax } from './task-math';

/** What a task head's input must be, checked before anything runs. */
function checkTaskInput(head: TaskHead, input: PredictInput): void {
  if (input.positions && input.positions.length > 0)
    throw new LensError(`positions are masked-token predictions; this checkpoint has a ${head.kind} head, which reads the input as it is`);
  if (head.kind === 'multiple-choice') {
    if (input.text === undefined || !input.choices || input.choices.length === 0)
      throw new LensError(
        'a multiple-choice head scores choices: give the prompt as text and the choices (--text PROMPT --choices "a|b|c")',
      );
    if (input.pair !== undefined) throw new LensError('multiple choice pairs the prompt with each choice: give --choices, not --pair');
    return;
  }
  if (input.choices) throw new LensError(`choices are for a multiple-choice head; this checkpoint has a ${head.kind} head`);
  if (head.kind === 'question-answering' && input.text !== undefined && input.pair === undefined)
    throw new LensError('a question-answering head reads a question and a context: give --text QUESTION --pair CONTEXT');
}

export async function predictTask(model: RunContext, input: PredictInput, signal?: AbortSignal): Promise<PredictResult> {
  const t0 = performance.now();
  const head = requireTaskHead(model);
  checkTaskInput(head, input);
  const tw = taskWeights(model.checkpoint, head);
  let tokenizeMs = 0,
    forwardMs = 0;
  const run = async (text: string | undefined, pair: string | undefined, ids: number[] | undefined) => {
    const t1 = performance.now();
    const prepared = await prepareInput(model, { text, pair, pairOffset: input.choices ? undefined : input.pairOffset, ids }, signal);
    tokenizeMs += performance.now() - t1;
    const fwd = await forwardOnly(model, prepared.ids, signal, prepared.tokenTypes);
    forwardMs += fwd.ms;
    return { prepared, hidden: fwd.hidden };
  };
  const t2 = () => performance.now();
  if (head.kind === 'multiple-choice') {
    const runs: Awaited<ReturnType<typeof run>>[] = [];
    for (const choice of input.choices!) runs.push(await run(input.text, choice, undefined));
    const th = t2();
    const logits = runs.map((r) => choiceLogit(tw, r.hidden));
    const scores = softmax(logits);
    const first = runs[0]!.prepared;
    const output: TaskOutput = {
      multiple_choice: {
        choices: logits.map((logit, index) => ({
          index,
          text: input.choices![index]!,
          logit,
          score: scores[index]!,
          input_ids: runs[index]!.prepared.ids,
        })),
        predicted: argmax(logits),
      },
    };
    return taskResult(model, first, output, { tokenizeMs, forwardMs, headMs: t2() - th, t0 });
  }
  const { prepared, hidden } = await run(input.text, input.pair, input.ids);
  const th = t2();
  const output = outputOf(model, head, hidden, prepared, input.pair);
  return taskResult(model, prepared, output, { tokenizeMs, forwardMs, headMs: t2() - th, t0 });
}

/** The task head on the last hidden state an explain of this model kept (no encoder run). */
export function predictTaskExplained(model: RunContext, result: ExplainResult, positions?: number[]): PredictResult {
  const t0 = performance.now();
  const head = requireTaskHead(model);
  checkTaskInput(head, { positions });
  if (head.kind === 'multiple-choice')
    throw new LensError('a multiple-choice head scores several choices, one run each: use predict with the prompt and its choices');
  const hidden = result.lastHidden;
  if (!hidden)
    throw new LensError('this result kept no last hidden state (it explained only some layers): explain every layer again', 'runtime');
  const prepared = { ids: result.inputIds, tokens: result.tokens, tokenTypes: result.tokenTypeIds, pairOffset: result.pairOffset };
  const th = performance.now();
  const output = outputOf(model, head, hidden, prepared, result.pair);
  return taskResult(model, prepared, output, { tokenizeMs: 0, forwardMs: 0, headMs: performance.now() - th, t0, reused: true });
}

/** The task head on a last hidden state computed elsewhere (a patched run's), as predict prints it. */
export function predictTaskOnHidden(
  model: RunContext,
  prepared: { ids: number[]; tokens: Token[]; tokenTypes?: number[]; pairOffset?: number },
  hidden: Float32Array,
  pair: string | undefined,
): PredictResult {
  const t0 = performance.now();
  const head = requireTaskHead(model);
  if (head.kind === 'multiple-choice') {
    // One choice's run (a patch follows one): what predict prints for that choice alone.
    if (pair === undefined) throw new LensError('a multiple-choice head scores a prompt with a choice: give the choice as the pair');
    const logit = choiceLogit(taskWeights(model.checkpoint, head), hidden);
    const output: TaskOutput = {
      multiple_choice: { choices: [{ index: 0, text: pair, logit, score: 1, input_ids: prepared.ids }], predicted: 0 },
    };
    return taskResult(model, prepared, output, { tokenizeMs: 0, forwardMs: 0, headMs: performance.now() - t0, t0, reused: true });
  }
  const output = outputOf(model, head, hidden, prepared, pair);
  return taskResult(model, prepared, output, { tokenizeMs: 0, forwardMs: 0, headMs: performance.now() - t0, t0, reused: true });
}

function taskResult(
  model: RunContext,
  prepared: { ids: number[]; tokens: Token[] },
  output: TaskOutput,
  t: { tokenizeMs: number; forwardMs: number; headMs: number; t0: number; reused?: boolean },
): PredictResult {
  return {
    task: requireTaskHead(model).kind,
    model: { ...model.info, execution_provider: model.session.provider },
    mlm_head: null,
    rtd_head: false,
    mask_id: model.tokenizer?.special.mask ?? null,
    input_ids: prepared.ids,
    tokens: prepared.tokens,
    predictions: [],
    decoder: 'plain',
    ...output,
    timings: {
      tokenize_ms: t.tokenizeMs,
      forward_ms: t.forwardMs,
      head_ms: t.headMs,
      total_ms: performance.now() - t.t0,
      ...(t.reused ? { forward_reused: true } : {}),
    },
  };
}
