// The engine's public surface: what the extension and the CLI call. Implemented in ./model.ts.
import type { ExplainResult } from './result';
import type { ExecutionProviderSetting, ModelInfo, TermName, TokenizerKind } from './types';

export interface EngineOptions {
  /** Preferred execution provider; falls back to CPU when it fails. Default 'auto'. */
  executionProvider?: ExecutionProviderSetting;
  /** Where built ONNX graphs are cached (keyed by checkpoint content). Default: ~/.cache/deberta-lens. */
  cacheDir?: string;
  /** Size limit of that cache in decimal GB: least recently used graphs beyond it are removed. Default 4. */
  cacheMaxGB?: number;
  /** Intra-op threads for onnxruntime (default: all cores). */
  threads?: number;
  /** Refuse inputs longer than this many tokens (specials included) with a clear error. Default 2048. */
  maxTokens?: number;
  /** Progress / diagnostic lines (the extension's output channel, the CLI's --verbose). */
  log?: (line: string) => void;
}

export interface ExplainInput {
  /** Text to tokenize; [CLS] … [SEP] are added. */
  text?: string;
  /** Ids fed as given (no specials added). Exactly one of text/ids. */
  ids?: number[];
  /** Layers to return (default: all). */
  layers?: number[];
}

/** `deberta-lens info` and the extension's Select Model validation. Cheap: no graph build. */
export interface ModelSummary extends Pick<ModelInfo, 'path' | 'name' | 'type' | 'layers' | 'heads' | 'head_dim'> {
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
}

export interface LensModel {
  readonly info: ModelInfo;
  readonly summary: ModelSummary;
  /** Rejects with LensError('cancelled') when `signal` aborts. */
  explain(input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult>;
  dispose(): Promise<void>;
}
