// The engine's public types: what the extension and the CLI call (through ./index.ts). Implemented in ./model.ts.
import type { AblateInput, AblateResult, PredictInput, PredictResult, SweepInput, SweepResult } from './prediction';
import type { AblatedRunInput } from './run/ablated-run';
import type { ExplainResult } from './result';
import type { Architecture, ExecutionProviderSetting, ModelInfo, TermName, TokenizerKind } from './types';

export interface EngineOptions {
  /** Preferred execution provider; falls back to CPU when it fails. Default 'auto'. */
  executionProvider?: ExecutionProviderSetting;
  /** Where built ONNX graphs are cached (keyed by checkpoint content). Default: ~/.cache/deberta-lens. */
  cacheDir?: string;
  /** Size limit of that cache in decimal GB: least recently used graphs beyond it are removed. Default 4. */
  cacheMaxGB?: number;
  /** Intra-op threads for onnxruntime (default: all cores). */
  threads?: number;
  /** Refuse inputs longer than this many tokens (specials included) with a clear error. Default 4096. */
  maxTokens?: number;
  /** How the caller names that limit in messages (the extension's setting, the CLI's flag). */
  maxTokensName?: string;
  /** The forward pass computes attention this many heads at a time (default 4): fewer, less working memory. */
  attentionHeadGroup?: number;
  /** Working memory of one one-layer run, in bytes (default 512 MiB): a layer's heads are computed in chunks that fit. */
  layerChunkBytes?: number;
  /** Progress / diagnostic lines (the extension's output channel, the CLI's --verbose). */
  log?: (line: string) => void;
}

export interface ExplainInput {
  /** Text to tokenize; [CLS] … [SEP] are added. */
  text?: string;
  /** With text: a second text, for a sentence pair [CLS] text [SEP] pair [SEP] (token types 0, then 1 from the
   *  pair on); the pair's tokens have offsets into `pair`. */
  pair?: string;
  /** Ids fed as given (no specials added). Exactly one of text/ids. */
  ids?: number[];
  /** Layers the result can give (default: all). Only these layers' input states are kept. */
  layers?: number[];
  /**
   * Heads of one layer (every term) to compute in the same runtime call, right after the forward pass: `heads`
   * heads from `head` on (default 1; fewer past the last head). The result's preview holds them on return, so a
   * view can show its first matrices without waiting for the whole layer (computed on demand as usual). Their
   * time is `timings.preview_ms`, not part of `total_ms`.
   */
  preview?: { layer: number; head: number; heads?: number };
}

/** `deberta-lens info` and the extension's Select Model validation. Cheap: no graph build. */
export interface ModelSummary extends Pick<ModelInfo, 'path' | 'name' | 'type' | 'layers' | 'heads' | 'head_dim'> {
  architecture: Architecture;
  hidden_size: number;
  intermediate_size: number;
  vocab_size: number;
  parameters: number;
  terms: TermName[];
  position_buckets: number;
  max_relative_positions: number;
  tokenizer: TokenizerKind | 'none';
  weights: string[];
  is_default: boolean;
  /** Which bundled model this folder is (`default`, `bert-twin`), or null for any other folder. */
  bundled: string | null;
  /** The prediction heads stored with the encoder, by key prefix (cls.predictions, lm_predictions.lm_head, mask_predictions). */
  prediction_heads: string[];
}

export interface LensModel {
  readonly info: ModelInfo;
  readonly summary: ModelSummary;
  /**
   * One forward pass; the result computes a layer's matrices when asked (`result.load(layer)`).
   * Rejects with LensError('cancelled') when `signal` aborts.
   */
  explain(input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult>;
  /** Fill-mask at every [MASK] (and at `positions`, masked first) and replaced-token detection, with the
   *  checkpoint's own heads. Rejects with a LensError naming what is missing when the checkpoint has no head. */
  predict(input: PredictInput, signal?: AbortSignal): Promise<PredictResult>;
  /** The same on the tokens of an explain result of this model: [MASK]s and RTD from the hidden state the explain
   *  kept (no second encoder run), each of `positions` masked and run once more. */
  predictExplained(result: ExplainResult, input: Pick<PredictInput, 'positions' | 'top'>, signal?: AbortSignal): Promise<PredictResult>;
  /** The same predictions before and after removing attention terms of chosen heads inside the forward pass
   *  (every later layer rerun), with KL and the followed token's log-probability and rank. The spec is checked
   *  against the model before anything runs. */
  ablate(input: AblateInput, signal?: AbortSignal): Promise<AblateResult>;
  /** The attention of the run with the intervention (every layer, computed on demand like explain's): intervened
   *  layers show the removed terms as the run used them and the softmax of that; later layers are the rerun's. */
  explainAblated(input: AblatedRunInput, signal?: AbortSignal): Promise<ExplainResult>;
  /** Head ranking at one position: each head's term removed alone (rerun from its layer), ranked by the drop in
   *  the followed token's log-probability. Cancelling kills the run in progress (`signal`). */
  sweep(input: SweepInput, signal?: AbortSignal): Promise<SweepResult>;
  dispose(): Promise<void>;
}
