// What a patch is measured on: the same targets as occlusion (./occlusion-target.ts: a task head's label or answer
// span, a masked-LM token's log-probability at a [MASK]) and, on a checkpoint with only a replaced-token-detection
// head, the RTD logit at a position. Every refusal is made before anything runs.
import type { SweepTarget } from '../api';
import type { Checkpoint } from '../checkpoint';
import { findHeads } from '../checkpoint/heads';
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import { HeadOutput } from '../graph/head-graph';
import type { Prepared } from './input';
import { planOcclusion, type OcclusionFollow } from './occlusion-target';
import type { RunContext } from './run-context';
import { checkSweepTarget } from './sweep-target';
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
  if (findHeads(ck).task?.kind === 'multiple-choice')
    throw new LensError('patching a multiple-choice head is not supported yet (it would score every choice): use predict --choices');
  if (rtdOnly(ck)) {
    if (target) throw new LensError('this checkpoint has only a replaced-token-detection head: drop --target and name --position i');
  } else checkSweepTarget(ck, target);
}

export function planPatchTarget(
  model: RunContext,
  prepared: Prepared,
  input: { target?: SweepTarget; position?: number },
  addHeadMs: (ms: number) => void,
  signal?: AbortSignal,
): PatchTargetPlan {
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
