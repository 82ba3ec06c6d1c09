// A task head on a last hidden state [n, D], as Hugging Face's classes compute it:
//   sequence classification  ContextPooler (h[CLS] → pooler.dense → ACT2FN[pooler_hidden_act]; BERT: tanh) → classifier
//   token classification     classifier on every row
//   question answering       qa_outputs on every row: column 0 start logits, column 1 end logits; the best span
//   multiple choice          the pooler and classifier [1, D] on each choice's sequence (one logit per choice)
// Dropout is the identity at inference. Float64 accumulation over float32 weights and states.
import type { ClassificationOutput, LabelScore, QuestionAnsweringOutput, TaskOutput, TokenLabels } from '../api';
import type { Checkpoint } from '../checkpoint';
import type { TaskHead } from '../checkpoint/heads';
import { requireWeight } from '../checkpoint';
import { LensError } from '../errors';
import { toFloat32 } from '../graph/float32';
import type { Token } from '../types';
import type { Prepared } from './input';
import type { RunContext } from './run-context';
import { activation, affine, argmax, sigmoid, softmax } from './task-math';

/** The longest answer span, in tokens (Hugging Face's question-answering pipeline default). */
export const MAX_ANSWER_LEN = 15;

export interface TaskWeights {
  head: TaskHead;
  D: number;
  pooler?: { w: Float32Array; b: Float32Array; act: (x: number) => number };
  w: Float32Array;
  b: Float32Array;
}

const loaded = new WeakMap<Checkpoint, TaskWeights>();

/** The head's weights as float32, read once per checkpoint (a few D×D floats). */
export function taskWeights(ck: Checkpoint, head: TaskHead): TaskWeights {
  const got = loaded.get(ck);
  if (got) return got;
  const D = ck.spec.hiddenSize;
  const read = (name: string, shape: number[]) => toFloat32(requireWeight(ck, name, shape));
  const pooler = head.pooler
    ? {
        w: read(`${head.pooler.dense}.weight`, [D, D]),
        b: read(`${head.pooler.dense}.bias`, [D]),
        act: activation(head.pooler.act),
      }
    : undefined;
  const weights: TaskWeights = {
    head,
    D,
    ...(pooler ? { pooler } : {}),
    w: read(`${head.output}.weight`, [head.rows, D]),
    b: read(`${head.output}.bias`, [head.rows]),
  };
  loaded.set(ck, weights);
  return weights;
}

/** The pooler's output on row 0 ([CLS]) and the classifier's logits on it. */
export function pooledLogits(tw: TaskWeights, hidden: Float32Array): { pooled: Float64Array; logits: Float64Array } {
  const p = tw.pooler!;
  const pooled = affine(p.w, p.b, hidden, 0, tw.D).map(p.act);
  return { pooled, logits: affine(tw.w, tw.b, pooled, 0, tw.D) };
}

function labelScores(head: TaskHead, logits: ArrayLike<number>, scores: number[]): LabelScore[] {
  return head.labels.map((label, id) => ({ id, label, logit: logits[id]!, score: scores[id]! }));
}

export function classify(tw: TaskWeights, hidden: Float32Array): ClassificationOutput {
  const head = tw.head;
  const { logits } = pooledLogits(tw, hidden);
  const fn = head.scoreFunction ?? 'softmax';
  const scores = fn === 'softmax' ? softmax(logits) : fn === 'sigmoid' ? Array.from(logits, sigmoid) : Array.from(logits);
  const labels = labelScores(head, logits, scores);
  return {
    problem_type: head.problemType ?? 'single_label_classification',
    score_function: fn,
    labels,
    ...(labels.length > 1 ? { predicted: labels[argmax(logits)]! } : {}),
  };
}

export function classifyTokens(tw: TaskWeights, hidden: Float32Array, n: number): TokenLabels[] {
  return Array.from({ length: n }, (_, i) => {
    const logits = affine(tw.w, tw.b, hidden, i * tw.D, tw.D);
    const labels = labelScores(tw.head, logits, softmax(logits));
    return { position: i, labels, predicted: labels[argmax(logits)]! };
  });
}

/** Where the context lies: the second segment (type 1 tokens, or after the first [SEP]), its final [SEP] excluded. */
export function contextTokens(tokens: Token[], tokenTypes: number[] | undefined, sepId: number | undefined): [number, number] | undefined {
  const n = tokens.length;
  let first = tokenTypes ? tokenTypes.indexOf(1) : -1;
  if (first < 0 && sepId !== undefined) {
    const sep = tokens.findIndex((t) => t.id === sepId);
    if (sep >= 0 && sep + 1 < n) first = sep + 1;
  }
  if (first < 0) return undefined;
  let end = first;
  while (end < n && !(tokens[end]!.special && tokens[end]!.id === sepId)) end++;
  return end > first ? [first, end] : undefined;
}

export function answerQuestion(
  tw: TaskWeights,
  hidden: Float32Array,
  tokens: Token[],
  context: [number, number] | undefined,
  pair: string | undefined,
  pairOffset = 0,
): QuestionAnsweringOutput {
  const n = tokens.length;
  const start: number[] = [],
    end: number[] = [];
  for (let i = 0; i < n; i++) {
    const y = affine(tw.w, tw.b, hidden, i * tw.D, tw.D);
    start.push(y[0]!);
    end.push(y[1]!);
  }
  let answer: QuestionAnsweringOutput['answer'] = null;
  if (context) {
    let best = -Infinity,
      bs = -1,
      be = -1;
    for (let s = context[0]; s < context[1]; s++)
      for (let e = s; e < Math.min(context[1], s + MAX_ANSWER_LEN); e++) {
        const score = start[s]! + end[e]!;
        if (score > best) [best, bs, be] = [score, s, e];
      }
    const from = pair !== undefined ? tokens[bs]!.start : null,
      to = pair !== undefined ? tokens[be]!.end : null;
    answer = {
      start: from,
      end: to,
      text: pair !== undefined && from !== null && to !== null ? pair.slice(from - pairOffset, to - pairOffset) : null,
      score: best,
      start_token: bs,
      end_token: be,
    };
  }
  return { start_logits: start, end_logits: end, context_tokens: context ?? [0, 0], max_answer_len: MAX_ANSWER_LEN, answer };
}

/** The head's output for one sequence (multiple choice is one logit per sequence: see ./task-predict.ts). */
export function taskOutput(
  tw: TaskWeights,
  hidden: Float32Array,
  seq: { tokens: Token[]; tokenTypes?: number[]; pair?: string; pairOffset?: number; sepId?: number },
): TaskOutput {
  const n = seq.tokens.length;
  switch (tw.head.kind) {
    case 'sequence-classification':
      return { classification: classify(tw, hidden) };
    case 'token-classification':
      return { token_classification: classifyTokens(tw, hidden, n) };
    case 'question-answering':
      return {
        question_answering: answerQuestion(
          tw,
          hidden,
          seq.tokens,
          contextTokens(seq.tokens, seq.tokenTypes, seq.sepId),
          seq.pair,
          seq.pairOffset,
        ),
      };
    case 'multiple-choice':
      throw new RangeError('multiple choice scores several sequences: use choiceLogit per choice');
  }
}

/** One choice's logit (the pooler and the [1, D] classifier on that choice's sequence). */
export function choiceLogit(tw: TaskWeights, hidden: Float32Array): number {
  return pooledLogits(tw, hidden).logits[0]!;
}

/** The task head, or the one line saying why the checkpoint's head cannot run. */
export function requireTaskHead(model: Pick<RunContext, 'heads'>): TaskHead {
  const { task, taskProblem } = model.heads.heads;
  if (task) return task;
  throw new LensError(taskProblem ?? 'this checkpoint has no task head', 'invalid-input');
}

/** The head's output on one sequence's last hidden state. */
export function outputOf(
  model: RunContext,
  head: TaskHead,
  hidden: Float32Array,
  prepared: Prepared,
  pair: string | undefined,
): TaskOutput {
  const tw = taskWeights(model.checkpoint, head);
  const { tokens, tokenTypes, pairOffset } = prepared;
  return taskOutput(tw, hidden, { tokens, tokenTypes, pair, pairOffset, sepId: model.tokenizer?.special.sep });
}
