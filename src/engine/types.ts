// Types shared across the engine's boundaries (checkpoint → graph → runtime → explain → CLI/extension).
// Defined once here; everything else imports them.

/** config.json's model_type: DeBERTa v1, DeBERTa v2/v3 (and mDeBERTa), BERT. */
export type ModelType = 'deberta' | 'deberta-v2' | 'bert';
/** The attention family: DeBERTa's disentangled relative terms, or BERT's absolute positions added to the input
 *  ("entangled": every score mixes content and position). */
export type Architecture = 'deberta' | 'bert';
export type { MatrixKind, TermName } from '../shared/kinds';
export { TERM_NAMES } from '../shared/kinds';
import type { TermName } from '../shared/kinds';

/** Normalised config.json: every field the forward pass needs, with HF's defaults and rules applied. */
export interface ModelSpec {
  modelType: ModelType;
  /** A BERT spec is written in DeBERTa's terms: absolute positions added to the input (positionBiasedInput),
   *  no relative attention (posAttType empty), scale sqrt(d) (scaleFactor 1), embeddingSize = hiddenSize. */
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number; // D
  embeddingSize: number; // E (E != D adds embed_proj)
  numLayers: number;
  numHeads: number; // H
  headDim: number; // d
  allHeadSize: number; // A = H·d
  intermediateSize: number;
  hiddenAct: 'gelu' | 'gelu_new' | 'relu' | 'tanh' | 'gelu_fast' | 'quick_gelu' | 'silu';
  layerNormEps: number;
  maxPositionEmbeddings: number; // P
  typeVocabSize: number; // T
  positionBiasedInput: boolean;
  relativeAttention: boolean;
  maxRelativePositions: number; // resolved M
  positionBuckets: number; // Bk (v2 only; 0 = no buckets)
  attSpan: number; // S; the relative table has 2S rows
  posAttType: ('c2p' | 'p2c')[]; // terms that exist (empty when !relativeAttention)
  scaleFactor: number; // sf; scale = sqrt(d·sf)
  shareAttKey: boolean;
  normRelEbd: boolean; // LayerNorm the relative table (v2 "layer_norm")
  convKernelSize: number;
  convGroups: number;
  convAct: ModelSpec['hiddenAct'];
  padTokenId: number;
}

export type DType = 'float32' | 'float16' | 'bfloat16';

/** One tensor of a checkpoint, read lazily: large checkpoints (deberta-v3-large is ~1.7 GB) must not be
 *  copied into memory just to be referenced. When the tensor's bytes sit contiguous and unmodified in a file
 *  (safetensors, or a stored entry of a PyTorch zip), `file` and `offset` say where, so the ONNX graph can point
 *  at them as external data. */
export interface TensorData {
  name: string;
  dtype: DType;
  shape: number[];
  /** Size in bytes of the tensor's data (product of shape × dtype size). */
  byteLength: number;
  /** Absolute path and byte offset of contiguous little-endian data, when such a place exists. */
  file?: string;
  offset?: number;
  /** Tensors with the same key hold the same bytes (views of one storage with the same offset, shape and stride,
   *  such as tied weights): a graph stores them once. */
  shareKey?: string;
  /** The little-endian bytes of `dtype`, contiguous, row-major. */
  read(): Uint8Array;
}

export interface Token {
  id: number;
  text: string; // the vocabulary piece (e.g. "▁the", "Ġthe", "[CLS]")
  /** [start, end) in UTF-16 code units of the original text (VS Code positions). Specials: empty range. */
  start: number;
  end: number;
  special: boolean;
}

export type TokenizerKind = 'spm' | 'tokenizer.json' | 'bpe' | 'wordpiece';

export type { ExecutionProviderSetting } from '../shared/providers';

/** What a result says about the model that produced it (also the CLI's "model" object). */
export interface ModelInfo {
  path: string;
  name: string;
  type: ModelType;
  /** Absent in results saved before BERT was read: those are DeBERTa. */
  architecture?: Architecture;
  layers: number;
  heads: number;
  head_dim: number;
  terms: TermName[];
  execution_provider: string;
  checkpoint_hash: string;
}
