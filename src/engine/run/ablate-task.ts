// Interventions on a checkpoint with a task head: the head's output (classification, token labels, QA spans, choice
// logits) before and after removing attention terms inside the forward pass, every later layer rerun from the first
// layer the intervention touches. The head reads the plain and the rerun last hidden states (./task-head-run.ts).
import type { AblateInput, AblateResult, TaskOutput } from '../api';
import { first } from '../../shared/checked';
import { LensError } from '../errors';
import { LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from '../graph/deberta-io';
import { graphInputs } from '../graph/graph-inputs';
import { type AblationPlan, planSummary } from './ablation-spec';
import { checkLength, int64Feeds, type Prepared, prepareInput } from './input';
import type { RunContext } from './run-context';
import { choiceLogit, outputOf, requireTaskHead, taskWeights } from './task-head-run';
import { argmax, softmax } from './task-math';

/** The last hidden state of one input, plain and with the intervention. */
async function bothStates(model: RunContext, plan: AblationPlan, prepared: Prepared, signal?: AbortSignal) {
  const spec = model.checkpoint.spec;
  const n = prepared.ids.length;
  checkLength(model, n);
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  const start = layerInputOutput(plan.firstLayer);
  const fwd = await model.session.run(
    'forward',
    int64Feeds(graphInputs(spec, prepared.ids, prepared.tokenTypes)),
    [start, LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])],
    signal,
  );
  let state: Float32Array, before: Float32Array, rel: Float32Array | undefined;
  let relRows = 0;
  try {
    [state, before] = [fwd.outputs.read(start), fwd.outputs.read(LAST_HIDDEN)];
    if (relative) [rel, relRows] = [fwd.outputs.read(REL_OUTPUT), first(fwd.outputs.dims(REL_OUTPUT), 'the shape of the relative rows')];
  } finally {
    fwd.outputs.release();
  }
  const tail = await model.tails.run(plan, state, rel, relRows, n, signal);
  if (!tail.hidden.every(Number.isFinite))
    throw new LensError(`${model.checkpoint.dir}: the rerun after the intervention gave non-finite states`, 'runtime');
  return { before, after: tail.hidden, forwardMs: fwd.ms, rerunMs: tail.ms };
}

export async function ablateTask(model: RunContext, plan: AblationPlan, input: AblateInput, signal?: AbortSignal): Promise<AblateResult> {
  const t0 = performance.now();
  const head = requireTaskHead(model);
  if (input.positions && input.positions.length > 0)
    throw new LensError(`positions are masked-token predictions; this checkpoint has a ${head.kind} head, which reads the input as it is`);
  let forwardMs = 0,
    rerunMs = 0,
    headMs = 0,
    tokenizeMs = 0;
  const prepare = async (text: string | undefined, pair: string | undefined) => {
    const t = performance.now();
    const p = await prepareInput(model, { text, pair, pairOffset: input.choices ? undefined : input.pairOffset, ids: input.ids }, signal);
    tokenizeMs += performance.now() - t;
    return p;
  };
  let shown: Prepared, before: TaskOutput, after: TaskOutput;
  if (head.kind === 'multiple-choice') {
    if (input.text === undefined || !input.choices || input.choices.length === 0)
      throw new LensError(
        'a multiple-choice head scores choices: give the prompt as text and the choices (--text PROMPT --choices "a|b|c")',
      );
    const tw = taskWeights(model.checkpoint, head);
    const logits: { before: number[]; after: number[]; ids: number[][] } = { before: [], after: [], ids: [] };
    let firstPrepared: Prepared | undefined;
    for (const choice of input.choices) {
      const p = await prepare(input.text, choice);
      firstPrepared ??= p;
      const s = await bothStates(model, plan, p, signal);
      [forwardMs, rerunMs] = [forwardMs + s.forwardMs, rerunMs + s.rerunMs];
      logits.before.push(choiceLogit(tw, s.before));
      logits.after.push(choiceLogit(tw, s.after));
      logits.ids.push(p.ids);
    }
    const out = (ls: number[]): TaskOutput => {
      const scores = softmax(ls);
      return {
        multiple_choice: {
          choices: ls.map((logit, index) => ({
            index,
            text: input.choices![index]!,
            logit,
            score: scores[index]!,
            input_ids: logits.ids[index]!,
          })),
          predicted: argmax(ls),
        },
      };
    };
    [shown, before, after] = [firstPrepared!, out(logits.before), out(logits.after)];
  } else {
    if (input.choices) throw new LensError(`choices are for a multiple-choice head; this checkpoint has a ${head.kind} head`);
    shown = await prepare(input.text, input.pair);
    const s = await bothStates(model, plan, shown, signal);
    [forwardMs, rerunMs] = [s.forwardMs, s.rerunMs];
    const th = performance.now();
    before = outputOf(model, head, s.before, shown, input.pair);
    after = outputOf(model, head, s.after, shown, input.pair);
    headMs = performance.now() - th;
  }
  const spec = model.checkpoint.spec;
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    ablation: planSummary(plan, spec.numLayers),
    mask_id: model.tokenizer?.special.mask ?? null,
    input_ids: shown.ids,
    tokens: shown.tokens,
    before: [],
    after: [],
    kl: [],
    tracked: [],
    task: head.kind,
    task_before: before,
    task_after: after,
    timings: { tokenize_ms: tokenizeMs, forward_ms: forwardMs, rerun_ms: rerunMs, head_ms: headMs, total_ms: performance.now() - t0 },
  };
}
