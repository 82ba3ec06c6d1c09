// Which prediction heads a checkpoint carries, and under which key layout.
//
// Masked LM, two layouts of the same arithmetic, logits = LayerNorm(act(h W_d^T + b_d)) W_out^T + bias:
//   - Hugging Face DebertaV2ForMaskedLM (`legacy: true`): `cls.predictions.transform.{dense,LayerNorm}.*`,
//     `cls.predictions.bias`; the decoder is tied to the word embeddings and usually not stored (a stored
//     `cls.predictions.decoder.weight` is used as is). The dense layer maps hidden_size → embedding_size.
//   - microsoft/DeBERTa's original `lm_predictions.lm_head.{dense,LayerNorm}.*` and `…lm_head.bias`; the decoder is
//     always the word-embedding matrix (hidden_size must equal embedding_size).
// Replaced-token detection (DeBERTa-v3 discriminators, microsoft's LMMaskPredictionHead), LayerNorm first:
//   logit_i = act(LayerNorm(h_0 + h_i) W_d^T + b_d) · w_c + b_c, with h_0 the [CLS] state.
// Fine-tuned task heads (sequence/token classification, question answering, multiple choice): ./task-head.ts finds
// them; this file reports them with the others, so every caller asks here which heads a checkpoint carries.
import * as path from 'node:path';
import type { Checkpoint } from './index';
import { findTaskHead, readConfigJson, type TaskHead } from './task-head';

export type { ProblemType, ScoreFunction, TaskHead, TaskKind } from './task-head';

export type MlmLayout = 'cls.predictions' | 'lm_predictions.lm_head';

/** Checkpoint tensor names (without the `deberta.` prefix) of a masked-LM head. */
export interface MlmHead {
  layout: MlmLayout;
  dense: string; // prefix of .weight [E, D] / .bias [E]
  layerNorm: string; // prefix of .weight / .bias [E]
  bias: string; // [V]
  decoder: string; // [V, E]
  /** E: the width the head projects to before the decoder. */
  width: number;
}

export interface RtdHead {
  dense: string; // [D, D]
  layerNorm: string; // [D]
  classifier: string; // .weight [1, D], .bias [1]
}

export interface Heads {
  mlm?: MlmHead;
  rtd?: RtdHead;
  /** A fine-tuned task head (classifier, QA outputs) that can run. */
  task?: TaskHead;
  /** A task head the checkpoint names or stores but that cannot run: the one line predict refuses with. */
  taskProblem?: string;
}

const CLS = 'cls.predictions';
const LM = 'lm_predictions.lm_head';
const RTD = 'mask_predictions';

/** The heads present; a head counts as present when its dense weight is stored (its other tensors are checked when
 *  the head graph is built, with a message naming the tensor). */
export function findHeads(ck: Checkpoint): Heads {
  const has = (name: string) => ck.weights.has(name);
  const heads: Heads = {};
  const hasCls = has(`${CLS}.transform.dense.weight`);
  const hasLm = has(`${LM}.dense.weight`);
  // Both layouts in one checkpoint: HF reads the one config.legacy names (true by default).
  const layout: MlmLayout | undefined = hasCls && hasLm ? (legacyFlag(ck) === false ? LM : CLS) : hasCls ? CLS : hasLm ? LM : undefined;
  if (layout === CLS) {
    heads.mlm = {
      layout,
      dense: `${CLS}.transform.dense`,
      layerNorm: `${CLS}.transform.LayerNorm`,
      bias: has(`${CLS}.bias`) ? `${CLS}.bias` : `${CLS}.decoder.bias`,
      decoder: has(`${CLS}.decoder.weight`) ? `${CLS}.decoder.weight` : 'embeddings.word_embeddings.weight',
      width: ck.spec.embeddingSize,
    };
  } else if (layout === LM) {
    heads.mlm = {
      layout,
      dense: `${LM}.dense`,
      layerNorm: `${LM}.LayerNorm`,
      bias: `${LM}.bias`,
      decoder: 'embeddings.word_embeddings.weight',
      width: ck.spec.hiddenSize,
    };
  }
  if (has(`${RTD}.dense.weight`)) heads.rtd = { dense: `${RTD}.dense`, layerNorm: `${RTD}.LayerNorm`, classifier: `${RTD}.classifier` };
  const task = findTaskHead(ck);
  if (task.head) heads.task = task.head;
  if (task.problem) heads.taskProblem = task.problem;
  return heads;
}

/** The heads present, by key prefix. */
export function headNames(heads: Heads): string[] {
  const task = heads.task ? [...(heads.task.pooler ? [heads.task.pooler.dense] : []), heads.task.output] : [];
  return [...(heads.mlm ? [heads.mlm.layout] : []), ...(heads.rtd ? [RTD] : []), ...task];
}

/** Why there is nothing to predict with: one line for the CLI and the views. */
export function noHeadMessage(ck: Checkpoint): string {
  return (
    `${ck.name} has no prediction head (no cls.predictions.*, lm_predictions.lm_head.*, mask_predictions.*, classifier.* or qa_outputs.* tensors in ` +
    `${ck.weightFiles.map((f) => path.basename(f)).join(', ')}): it was saved as a bare encoder; use a checkpoint saved ` +
    `with its masked-LM, replaced-token-detection or task head`
  );
}

function legacyFlag(ck: Checkpoint): boolean | undefined {
  const json = readConfigJson(ck);
  // A config.json that cannot be read now (it was when the checkpoint loaded) leaves Hugging Face's default.
  const v = typeof json === 'string' ? undefined : json.legacy;
  return typeof v === 'boolean' ? v : undefined;
}
