// What an occlusion follows and how it is read off each variant's rows: a task head's decision (./sweep-target.ts's
// targets, read in JS from a few rows of the last hidden state) or a masked-LM token's log-probability at one
// position (the head graph). Every refusal is made before anything runs.
import type { OccludeInput, OcclusionTargetInfo, TaskName } from '../api';
import type { Checkpoint } from '../checkpoint';
import { findHeads } from '../checkpoint/heads';
import { first } from '../../shared/checked';
import { LensError } from '../errors';
import { HeadOutput } from '../graph/head-graph';
import type { Prepared } from './input';
import { followedPosition, nameTokens, rateTokenInVariants, readPrediction } from './prediction-read';
import type { RunContext } from './run-context';
import { checkSweepTarget, taskFollow } from './sweep-target';
import { taskWeights } from './task-head-run';

/** The followed value on the input and how to read it off variants. */
export interface OcclusionFollow {
  target: OcclusionTargetInfo;
  before: number;
  /** Input positions of the rows the followed value reads. */
  rows: number[];
  /** `data`: `variants` × rows.length rows of D (each variant's followed rows, in `rows` order), variant-major. */
  rate(data: Float32Array, variants: number): Promise<number[]>;
}

/** One input's occlusion before any run: the ids the variants start from, the positions never taken out, and how
 *  to read the target once the input's last hidden state is known. */
export interface OcclusionPlan {
  task: TaskName;
  runIds: number[];
  /** Positions no variant takes out (the followed masked-LM position). */
  fixed: number[];
  follow(last: Float32Array): Promise<OcclusionFollow>;
}

/** The head and target checked against the checkpoint alone (before a model opens, or anything is tokenized). */
export function checkOcclusionTarget(ck: Checkpoint, input: Pick<OccludeInput, 'target'>): void {
  if (findHeads(ck).task?.kind === 'multiple-choice')
    throw new LensError('occlusion on a multiple-choice head is not supported yet (it would score every choice): use predict --choices');
  checkSweepTarget(ck, input.target);
}

export function planOcclusion(
  model: RunContext,
  prepared: Prepared,
  input: Pick<OccludeInput, 'target' | 'position'>,
  addHeadMs: (ms: number) => void,
  signal?: AbortSignal,
): OcclusionPlan {
  const ck = model.checkpoint;
  const task = model.heads.heads.task;
  if (task) {
    const read = taskFollow(taskWeights(ck, task), prepared, {
      target: input.target,
      position: input.position,
      sepId: model.tokenizer?.special.sep,
    });
    return {
      task: task.kind,
      runIds: prepared.ids,
      fixed: [],
      follow: (last) => {
        const tf = read(last);
        return Promise.resolve({
          target: tf.target,
          before: tf.before,
          rows: tf.rows,
          rate: (data, variants) => {
            const t0 = performance.now();
            const values = tf.rate(data, variants).map((v) => v.value);
            addHeadMs(performance.now() - t0);
            return Promise.resolve(values);
          },
        });
      },
    };
  }
  const asked = input.target && 'token' in input.target ? input.target.token : undefined;
  const { position, runIds, original } = followedPosition(model, prepared.ids, input.position, 'follow');
  return {
    task: 'masked-lm',
    runIds,
    fixed: [position],
    follow: async (last) => {
      const n = runIds.length;
      const out = await model.heads.run(last, n, [position], [asked ?? original ?? 0], 1, false, signal);
      addHeadMs(out.ms);
      const row = readPrediction(out.read, position, 1);
      const lse = first(out.read(HeadOutput.logSumExp), 'the log-sum-exp row');
      const id = asked ?? original ?? row.first.id;
      const logit = asked === undefined && original === undefined ? row.first.logit : row.target.logit;
      const which = asked !== undefined ? 'asked' : original === undefined ? 'top1_before' : 'original';
      const target: Extract<OcclusionTargetInfo, { kind: 'token' }> = {
        kind: 'token',
        id,
        token: `#${id}`,
        position,
        which,
        logprob_before: logit - lse,
      };
      await nameTokens(model, [target], signal);
      return {
        target,
        before: target.logprob_before,
        rows: [position],
        rate: async (data, variants) => (await rateTokenInVariants(model, data, variants, id, signal, addHeadMs)).map((r) => r.logprob),
      };
    },
  };
}
