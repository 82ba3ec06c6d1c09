// config.json of model_type "bert" → ModelSpec, with Hugging Face BertConfig's defaults. BERT is written in
// DeBERTa's terms: absolute position embeddings added to the input, no relative attention, scale sqrt(d).
// Options that change the attention itself (relative position variants, decoder masks) are refused by name.
import { LensError } from '../errors';
import type { ModelSpec } from '../types';
import type { FieldReader } from './config-fields';

export function parseBertConfig(r: FieldReader, file: string): ModelSpec {
  const vocabSize = r.positiveInt('vocab_size', 30522);
  const hiddenSize = r.positiveInt('hidden_size', 768);
  const numLayers = r.positiveInt('num_hidden_layers', 12);
  const numHeads = r.positiveInt('num_attention_heads', 12);
  const intermediateSize = r.positiveInt('intermediate_size', 3072);
  if (hiddenSize % numHeads !== 0) {
    throw new LensError(`${file}: hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads}; fix the config.`);
  }
  const posType = r.raw('position_embedding_type') ?? 'absolute';
  if (posType !== 'absolute') {
    throw new LensError(
      `${file}: position_embedding_type ${JSON.stringify(posType)} is not supported; DeBERTa Lens reads BERT with ` +
        `absolute position embeddings ("absolute").`,
      'unsupported',
    );
  }
  for (const key of ['is_decoder', 'add_cross_attention']) {
    if (r.bool(key, false)) {
      throw new LensError(`${file}: ${key} is true; DeBERTa Lens reads BERT encoders only — pick an encoder checkpoint.`, 'unsupported');
    }
  }
  const maxPositionEmbeddings = r.positiveInt('max_position_embeddings', 512);
  return {
    modelType: 'bert',
    architecture: 'bert',
    vocabSize,
    hiddenSize,
    // BertEmbeddings sizes every embedding with hidden_size (embedding_size is ALBERT's, not BERT's).
    embeddingSize: hiddenSize,
    numLayers,
    numHeads,
    headDim: hiddenSize / numHeads,
    allHeadSize: hiddenSize,
    intermediateSize,
    hiddenAct: r.activation('hidden_act', 'gelu'),
    layerNormEps: r.positiveNumber('layer_norm_eps', 1e-12),
    maxPositionEmbeddings,
    typeVocabSize: r.nonNegativeInt('type_vocab_size', 2),
    positionBiasedInput: true,
    relativeAttention: false,
    maxRelativePositions: maxPositionEmbeddings,
    positionBuckets: 0,
    attSpan: maxPositionEmbeddings,
    posAttType: [],
    scaleFactor: 1,
    shareAttKey: false,
    normRelEbd: false,
    convKernelSize: 0,
    convGroups: 1,
    convAct: 'tanh',
    padTokenId: r.int('pad_token_id', 0),
  };
}
