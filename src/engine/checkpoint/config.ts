// config.json → ModelSpec, following Hugging Face's DebertaConfig / DebertaV2Config and the attention modules'
// own reading of it (deberta-spec.md §2). Every default and counting rule here mirrors HF, not the paper.
import { LensError } from '../errors';
import type { ModelSpec } from '../types';
import { parseBertConfig } from './bert-config';
import { FieldReader } from './config-fields';

type DebertaType = 'deberta' | 'deberta-v2';
const DEBERTA_TYPES: readonly string[] = ['deberta', 'deberta-v2'];

/** HF class defaults that differ between v1 (`deberta`) and v2/v3 (`deberta-v2`). */
const CLASS_DEFAULTS: Record<DebertaType, { V: number; D: number; L: number; H: number; I: number }> = {
  deberta: { V: 50265, D: 768, L: 12, H: 12, I: 3072 },
  'deberta-v2': { V: 128100, D: 1536, L: 24, H: 24, I: 6144 },
};

/** Normalises a parsed config.json. `file` is named in every error message. */
export function parseConfig(json: unknown, file: string): ModelSpec {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new LensError(`${file}: expected a JSON object with the model's configuration; re-download config.json.`, 'corrupt');
  }
  const r = new FieldReader(json as Record<string, unknown>, file);

  const rawType = r.raw('model_type');
  if (rawType === 'bert') return parseBertConfig(r, file);
  if (typeof rawType !== 'string' || !DEBERTA_TYPES.includes(rawType)) {
    const got = rawType === undefined ? 'has no model_type' : `has model_type ${JSON.stringify(rawType)}`;
    throw new LensError(
      `${file} ${got}, which DeBERTa Lens does not read: it reads DeBERTa ("deberta"; "deberta-v2" for v2, v3 and ` +
        `mDeBERTa) and BERT ("bert") checkpoints.`,
      'unsupported',
    );
  }
  const modelType = rawType as DebertaType;
  const v2 = modelType === 'deberta-v2';
  const dflt = CLASS_DEFAULTS[modelType];

  const vocabSize = r.positiveInt('vocab_size', dflt.V);
  const hiddenSize = r.positiveInt('hidden_size', dflt.D);
  const numLayers = r.positiveInt('num_hidden_layers', dflt.L);
  const numHeads = r.positiveInt('num_attention_heads', dflt.H);
  const intermediateSize = r.positiveInt('intermediate_size', dflt.I);
  // HF checks D % H even when attention_head_size overrides d (v2).
  if (hiddenSize % numHeads !== 0) {
    throw new LensError(`${file}: hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads}; fix the config.`);
  }
  // attention_head_size is read only by the v2 attention; v1 always uses D/H.
  const headDim = v2 ? r.positiveInt('attention_head_size', hiddenSize / numHeads) : hiddenSize / numHeads;
  const embeddingSize = r.positiveInt('embedding_size', hiddenSize);

  const hiddenAct = r.activation('hidden_act', 'gelu');
  const layerNormEps = r.positiveNumber('layer_norm_eps', 1e-7);
  const maxPositionEmbeddings = r.positiveInt('max_position_embeddings', 512);
  const typeVocabSize = r.nonNegativeInt('type_vocab_size', 0);
  const positionBiasedInput = r.bool('position_biased_input', true);
  const relativeAttention = r.bool('relative_attention', false);

  const maxRelRaw = r.int('max_relative_positions', -1);
  const maxRelativePositions = maxRelRaw >= 1 ? maxRelRaw : maxPositionEmbeddings;
  const bucketsRaw = v2 ? r.int('position_buckets', -1) : -1;
  const positionBuckets = bucketsRaw > 0 ? bucketsRaw : 0;
  const attSpan = positionBuckets > 0 ? positionBuckets : maxRelativePositions;
  if (relativeAttention && positionBuckets > 0) {
    const mid = Math.floor(positionBuckets / 2);
    // The log-bucket formula divides by ln((M−1)/mid); at or below 0 it yields nonsense rows rather than an error.
    if (maxRelativePositions - 1 <= mid) {
      throw new LensError(
        `${file}: position_buckets ${positionBuckets} needs max_relative_positions above ${mid + 1} ` +
          `(got ${maxRelativePositions}); fix the config.`,
      );
    }
  }

  const posAttList = r.posAttType();
  // v1 counts every entry; v2 counts only c2p and p2c (deberta-spec §5.5). Both count even without relative attention.
  const hasC2p = posAttList.includes('c2p');
  const hasP2c = posAttList.includes('p2c');
  const scaleFactor = v2 ? 1 + (hasC2p ? 1 : 0) + (hasP2c ? 1 : 0) : 1 + posAttList.length;
  const posAttType: ('c2p' | 'p2c')[] = [];
  if (relativeAttention) {
    if (hasC2p) posAttType.push('c2p');
    if (hasP2c) posAttType.push('p2c');
  }

  const shareAttKey = v2 ? r.bool('share_att_key', false) : false;
  const normRelEbd = v2 ? r.normRelEbd() : false;
  const convKernelSize = v2 ? r.nonNegativeInt('conv_kernel_size', 0) : 0;
  const convGroups = v2 ? r.positiveInt('conv_groups', 1) : 1;
  const convAct = v2 ? r.activation('conv_act', 'tanh') : 'tanh';
  if (convKernelSize > 0) {
    if (convKernelSize % 2 === 0) {
      throw new LensError(
        `${file}: conv_kernel_size ${convKernelSize} is even, which would shorten the sequence; only odd kernels are supported.`,
        'unsupported',
      );
    }
    if (hiddenSize % convGroups !== 0) {
      throw new LensError(`${file}: hidden_size ${hiddenSize} is not a multiple of conv_groups ${convGroups}; fix the config.`);
    }
  }
  if (!v2 && r.bool('talking_head', false)) {
    throw new LensError(
      `${file}: talking_head attention (mixing heads around the softmax) is not supported by DeBERTa Lens; ` +
        `pick a checkpoint without it.`,
      'unsupported',
    );
  }
  const padTokenId = r.int('pad_token_id', 0);

  return {
    modelType,
    architecture: 'deberta',
    vocabSize,
    hiddenSize,
    embeddingSize,
    numLayers,
    numHeads,
    headDim,
    allHeadSize: numHeads * headDim,
    intermediateSize,
    hiddenAct,
    layerNormEps,
    maxPositionEmbeddings,
    typeVocabSize,
    positionBiasedInput,
    relativeAttention,
    maxRelativePositions,
    positionBuckets,
    attSpan,
    posAttType,
    scaleFactor,
    shareAttKey,
    normRelEbd,
    convKernelSize,
    convGroups,
    convAct,
    padTokenId,
  };
}
