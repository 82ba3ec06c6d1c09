// What a checkpoint is, in the summary Select Model and `deberta-lens info` show, and its tokenizer checked
// against it: shared by openModel and the load process (load-process.ts), which runs them outside the caller.
import * as path from 'node:path';
import type { ModelSummary } from '../api';
import type { Checkpoint } from '../checkpoint';
import { emdPlan, type EmdPlan } from '../checkpoint/emd';
import { findHeads, headNames } from '../checkpoint/heads';
import { LensError } from '../errors';
import { ThreadedTokenizer } from '../tokenizer-thread/threaded-tokenizer';
import type { TokenizerHandle } from '../tokenizer/types';
import { bundledName, DEFAULT_MODEL } from './model-dir';

const HEAD_PREFIXES = ['lm_predictions.', 'cls.', 'classifier.', 'pooler.', 'qa_outputs.', 'lm_head.', 'mask_predictions.'];

/** Parameters of the encoder (task heads and buffers excluded). */
export function encoderParameters(ck: Checkpoint): number {
  let total = 0;
  for (const [name, t] of ck.weights) {
    if (HEAD_PREFIXES.some((p) => name.startsWith(p)) || name.endsWith('position_ids')) continue;
    if (name === 'embeddings.position_embeddings.weight' && !ck.spec.positionBiasedInput) continue;
    total += t.shape.reduce((a, b) => a * b, 1);
  }
  return total;
}

function emdSummary(plan: EmdPlan): Pick<ModelSummary, 'emd' | 'emd_rows'> {
  return plan.kind === 'passes' ? { emd: 'passes', emd_rows: plan.rows } : { emd: plan.kind };
}

export function summarize(ck: Checkpoint, tokenizer: Pick<TokenizerHandle, 'kind'> | undefined): ModelSummary {
  const s = ck.spec;
  // One walk up the folders for both fields (each bundled model is looked for beside the bundle or the sources).
  const bundled = bundledName(ck.dir);
  const heads = findHeads(ck);
  return {
    path: ck.dir,
    name: ck.name,
    type: s.modelType,
    architecture: s.architecture,
    layers: s.numLayers,
    heads: s.numHeads,
    head_dim: s.headDim,
    hidden_size: s.hiddenSize,
    intermediate_size: s.intermediateSize,
    vocab_size: s.vocabSize,
    parameters: encoderParameters(ck),
    // BERT has no per-layer terms: its scores are one q·k product (layer 0 splits into four by the embeddings).
    terms: s.architecture === 'bert' ? [] : ['c2c', ...s.posAttType.slice().sort()],
    position_buckets: s.positionBuckets,
    max_relative_positions: s.maxRelativePositions,
    tokenizer: tokenizer?.kind ?? 'none',
    weights: ck.weightFiles.map((f) => path.basename(f)),
    is_default: bundled === DEFAULT_MODEL,
    bundled,
    prediction_heads: headNames(heads),
    task_head: heads.task?.kind ?? null,
    ...emdSummary(emdPlan(ck, heads)),
  };
}

/** The folder's tokenizer, loaded in its own thread, with its special ids checked against the model. */
export async function tryTokenizer(dir: string, ck: Checkpoint): Promise<TokenizerHandle | undefined> {
  let tok: TokenizerHandle;
  try {
    tok = await ThreadedTokenizer.open(dir);
  } catch (e) {
    // A folder without tokenizer files still explains `--ids`; text input reports the missing tokenizer then.
    if (e instanceof LensError && e.code === 'not-found') return undefined;
    throw e;
  }
  for (const [role, id] of Object.entries(tok.special)) {
    if (id >= ck.spec.vocabSize) {
      await tok.dispose();
      throw new LensError(
        `${dir}: the tokenizer's ${role} token has id ${id}, outside the model's vocabulary of ${ck.spec.vocabSize} (config.json vocab_size); ` +
          `the tokenizer files do not belong to this model.`,
        'corrupt',
      );
    }
  }
  return tok;
}
