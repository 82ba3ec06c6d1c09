// What a patch is measured on: the same targets as occlusion (./occlusion-target.ts: a task head's label or answer
// span, a masked-LM token's log-probability at a [MASK]); on a checkpoint with only a replaced-token-detection head,
// the RTD logit at a position; on a multiple-choice head, the score of one choice (the head scores each choice on a
// sequence of its own, so a patch follows one: the prompt as the text, the choice as its pair). Every refusal is made
// before anything runs.
import type { SweepTarget } from '../api';
import type { Checkpoint } from '../checkpoint';
import { findHeads, type TaskHead } from '../checkpoint/heads';
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import { HeadOutput } from '../graph/head-graph';
import type { Prepared } from './input';
import { planOcclusion, type OcclusionFollow } from './occlusion-target';
import type { RunContext } from './run-context';
import { checkSweepTarget } from './sweep-target';
import { choiceLogit, taskWeights } from './task-head-run';
import type { PatchTargetInfo } from '../api';

export interface PatchFollow extends Omit<OcclusionFollow, 'target'> {
  target: PatchTargetInfo;
}

export interface PatchTargetPlan {
  /** The ids the clean text runs with (the followed masked-LM position masked first when it is not a [MASK]). */
  runIds: number[];
  follow(cleanLast: Float32Array): Promise<PatchFollow>;
}

const rtdOnly = (ck: Checkpoint) => {
  const heads = findHeads(ck);
  return !heads.mlm && !heads.task && !heads.taskProblem && heads.rtd !== undefined;
};

/** The model, head and target checked against the checkpoint alone (before a model opens, or anything is tokenized). */
export function checkPatchTarget(ck: Checkpoint, target: SweepTarget | undefined): void {
  if (findHeads(ck).task?.kind === 'multiple-choice') {
    if (target)
      throw new LensError(
        'a multiple-choice patch follows the score of the choice given as the pair (--text PROMPT --pair CHOICE): drop --target',
      );
    return;
  }
  if (rtdOnly(ck)) {
    if (target) throw new LensError('this checkpoint has only a replaced-token-detection head: drop --target and name --position i');
  } else checkSweepTarget(ck, target);
}

export function planPatchTarget(
  model: RunContext,
  prepared: Prepared,
  input: { target?: SweepTarget; position?: number; pair?: string },
  addHeadMs: (ms: number) => void,
  signal?: AbortSignal,
): PatchTargetPlan {
  const task = model.heads.heads.task;
  if (task?.kind === 'multiple-choice') return choicePlan(model, task, prepared, input, addHeadMs);
  if (!rtdOnly(model.checkpoint)) {
    const plan = planOcclusion(model, prepared, input, addHeadMs, signal);
    return { runIds: plan.runIds, follow: (last) => plan.follow(last) };
  }
  const p = input.position;
  if (p === undefined)
    throw new LensError('a replaced-token-detection target is the RTD logit at one token: name its position (--position i)');
  const D = model.checkpoint.spec.hiddenSize;
  // The RTD head reads a row and the [CLS] row (it adds them): rows 0 and p of each variant.
  const rtdOf = async (rows: Float32Array) => {
    const out = await model.heads.run(rows, 2, [], [], 1, true, signal);
    addHeadMs(out.ms);
    return at(out.read(HeadOutput.rtdLogits), 1, 'the RTD logit');
  };
  return {
    runIds: prepared.ids,
    follow: async (last) => {
      const both = new Float32Array(2 * D);
      both.set(last.subarray(0, D), 0);
      both.set(last.subarray(p * D, (p + 1) * D), D);
      const before = await rtdOf(both);
      return {
        target: { kind: 'rtd', position: p, logit_before: before },
        before,
        rows: [0, p],
        rate: async (data, variants) => {
          const out: number[] = [];
          for (let k = 0; k < variants; k++) out.push(await rtdOf(data.subarray(2 * k * D, 2 * (k + 1) * D)));
          return out;
        },
      };
    },
  };
}

/** A multiple-choice head's score of the choice the run holds: the head reads the [CLS] row (its pooler's input). */
function choicePlan(
  model: RunContext,
  task: TaskHead,
  prepared: Prepared,
  input: { position?: number; pair?: string },
  addHeadMs: (ms: number) => void,
): PatchTargetPlan {
  const choice = input.pair;
  if (choice === undefined)
    throw new LensError('a multiple-choice head scores a prompt with one choice: give the prompt as the text and the choice as --pair');
  if (input.position !== undefined)
    throw new LensError('a multiple-choice head reads the whole sequence (its [CLS] row): drop the position');
  const tw = taskWeights(model.checkpoint, task),
    D = tw.D;
  const score = (rows: Float32Array) => {
    const t0 = performance.now();
    const v = choiceLogit(tw, rows);
    addHeadMs(performance.now() - t0);
    return v;
  };
  return {
    runIds: prepared.ids,
    follow: (last) => {
      const before = score(last.subarray(0, D));
      return Promise.resolve({
        target: { kind: 'choice', choice, logit_before: before },
        before,
        rows: [0],
        rate: (data, variants) => Promise.resolve(Array.from({ length: variants }, (_, k) => score(data.subarray(k * D, (k + 1) * D)))),
      });
    },
  };
}
