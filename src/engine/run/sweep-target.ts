// What a head ranking follows on a task-head checkpoint: the decision's own number, read by the head (in JS, as
// ./task-head-run.ts computes it) from a few rows of the last hidden state — so the batched reruns return only those
// rows. Sequence classification reads [CLS] (the pooler's input), token classification one token, question answering
// the answer span's start and end rows.
import type { SweepTarget, SweepTargetInfo } from '../api';
import type { Checkpoint } from '../checkpoint';
import { findHeads, type TaskHead } from '../checkpoint/heads';
import { LensError } from '../errors';
import type { Prepared } from './input';
import { requireMlmHead } from './prediction-read';
import { affine } from './task-math';
import { answerQuestion, classify, classifyTokens, contextTokens, type TaskWeights } from './task-head-run';

/** The followed value of one variant: `value` is what `drop` subtracts from the value before. */
export interface FollowedValue {
  value: number;
  logit_after: number;
  score_after?: number;
}

/** A task-head target: the rows it reads, its value before, and how to read it off each variant's rows. */
export interface TaskFollow {
  rows: number[];
  target: SweepTargetInfo;
  before: number;
  /** `data` holds `variants` × rows.length rows of D, variant-major (the sweep graph's `rows` output). */
  rate(data: Float32Array, variants: number): FollowedValue[];
}

/** A label target's id: a number is an id; a string a name, or an id when all digits and no label has that name. */
function labelId(head: TaskHead, label: string | number): number {
  const names = head.labels;
  const list = names.join(', ');
  if (typeof label === 'string') {
    const byName = names.indexOf(label);
    if (byName >= 0) return byName;
    if (!/^\d+$/.test(label)) throw new LensError(`target label "${label}" is not one of this head's labels (${list})`);
    label = Number(label);
  }
  if (!Number.isSafeInteger(label) || label < 0 || label >= names.length)
    throw new LensError(`target label id ${label} is not one of this head's ${names.length} labels (ids 0…${names.length - 1}: ${list})`);
  return label;
}

/** A target checked against the checkpoint's head alone (the CLI's check before a model opens; the sweep's first). */
export function checkSweepTarget(ck: Checkpoint, target: SweepTarget | undefined): void {
  const task = findHeads(ck).task;
  if (!task) {
    requireMlmHead(ck);
    if (!target) return;
    if (!('token' in target))
      throw new LensError('a label target needs a classification head; this checkpoint has a masked-LM head: follow a token (token:ID)');
    const V = ck.spec.vocabSize;
    if (!(Number.isSafeInteger(target.token) && target.token >= 0 && target.token < V))
      throw new LensError(`target token ${target.token} is not a token id of this vocabulary (0…${V - 1})`);
    return;
  }
  if (task.kind === 'multiple-choice')
    throw new LensError('a head ranking on a multiple-choice head is not supported yet (it would sweep every choice): use ablate --ablate');
  if (!target) return;
  if (!('label' in target))
    throw new LensError(
      `a token target follows a masked-LM head's prediction; this checkpoint has a ${task.kind} head: name a label (label:NAME)`,
    );
  if (task.kind === 'question-answering')
    throw new LensError('a question-answering ranking follows the predicted answer span (start + end logit): drop the target');
  labelId(task, target.label);
}

/** The task head's target on one input. Every refusal comes here, before anything runs; the returned function reads
 *  the target off the plain last hidden state `last` [n, D]. */
export function taskFollow(
  tw: TaskWeights,
  prepared: Prepared,
  asked: { target?: SweepTarget; position?: number; sepId?: number },
): (last: Float32Array) => TaskFollow {
  const head = tw.head,
    D = tw.D,
    n = prepared.ids.length;
  const target = asked.target;
  if (target && !('label' in target))
    throw new LensError(
      `a token target follows a masked-LM head's prediction; this checkpoint has a ${head.kind} head: name a label (label:NAME)`,
    );
  const row = (data: Float32Array, r: number) => data.subarray(r * D, (r + 1) * D);
  switch (head.kind) {
    case 'sequence-classification': {
      if (asked.position !== undefined)
        throw new LensError(`a sequence-classification head reads the whole input (its [CLS] row): drop the position`);
      const asId = target ? labelId(head, target.label) : undefined;
      return (last) => {
        const plain = classify(tw, row(last, 0));
        const id = asId ?? plain.predicted?.id ?? 0;
        const at = plain.labels[id]!;
        return {
          rows: [0],
          target: { kind: 'label', id, label: at.label, logit_before: at.logit, score_before: at.score },
          before: at.logit,
          rate: (data, variants) =>
            Array.from({ length: variants }, (_, k) => {
              const l = classify(tw, row(data, k)).labels[id]!;
              return { value: l.logit, logit_after: l.logit, score_after: l.score };
            }),
        };
      };
    }
    case 'token-classification': {
      const p = asked.position;
      if (p === undefined)
        throw new LensError('a token-classification ranking follows one token: name its position (--position i, 0 = [CLS])');
      if (p >= n) throw new LensError(`position ${p} is past the input's last token (${n - 1})`);
      const asId = target ? labelId(head, target.label) : undefined;
      return (last) => {
        const plain = classifyTokens(tw, row(last, p), 1)[0]!;
        const id = asId ?? plain.predicted.id;
        const at = plain.labels[id]!;
        return {
          rows: [p],
          target: { kind: 'label', id, label: at.label, position: p, logit_before: at.logit, score_before: at.score },
          before: at.logit,
          rate: (data, variants) =>
            Array.from({ length: variants }, (_, k) => {
              const l = classifyTokens(tw, row(data, k), 1)[0]!.labels[id]!;
              return { value: l.logit, logit_after: l.logit, score_after: l.score };
            }),
        };
      };
    }
    case 'question-answering': {
      if (target)
        throw new LensError('a question-answering ranking follows the predicted answer span (start + end logit): drop the target');
      if (asked.position !== undefined)
        throw new LensError('a question-answering ranking follows the predicted answer span: drop the position');
      const context = contextTokens(prepared.tokens, prepared.tokenTypes, asked.sepId);
      if (!context)
        throw new LensError('a question-answering ranking follows the answer span: give the context as the pair (--pair CONTEXT)');
      return (last) => {
        const answer = answerQuestion(tw, last, prepared.tokens, context, undefined).answer!;
        const [s, e] = [answer.start_token, answer.end_token];
        // Start logit of row s (qa_outputs row 0) + end logit of row e (row 1): the span's score.
        const spanLogit = (startRow: Float32Array, endRow: Float32Array) =>
          affine(tw.w, tw.b, startRow, 0, D)[0]! + affine(tw.w, tw.b, endRow, 0, D)[1]!;
        const before = spanLogit(row(last, s), row(last, e));
        return {
          rows: [s, e],
          target: { kind: 'span', start_token: s, end_token: e, logit_before: before },
          before,
          rate: (data, variants) =>
            Array.from({ length: variants }, (_, k) => {
              const v = spanLogit(row(data, 2 * k), row(data, 2 * k + 1));
              return { value: v, logit_after: v };
            }),
        };
      };
    }
    case 'multiple-choice':
      throw new LensError(
        'a head ranking on a multiple-choice head is not supported yet (it would sweep every choice): use ablate --ablate',
      );
  }
}
