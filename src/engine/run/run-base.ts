// What every run helper reads of an open model: its checkpoint, tokenizer and runtime process, the limits it was
// opened with, and how to start more graphs (where they are cached, on how many threads). A leaf of run/: it
// imports no verb, no helper and not the concrete model (model/open-model.ts implements it).
import type { Checkpoint } from '../checkpoint';
import type { GraphOptions } from '../graph/graph-cache';
import type { GraphRecipe } from '../graph/graph-recipes';
import type { RuntimeSession } from '../runtime/session';
import type { TokenizerHandle } from '../tokenizer/types';
import type { ExecutionProviderSetting, ModelInfo } from '../types';

/** Where built graphs go and how the cache is kept: built once when the model opens, used by every graph after. */
export interface GraphCacheSettings {
  readonly dir: string;
  readonly options: GraphOptions;
  /**
   * Set for models opened with `isolate`: builds a graph not yet cached into `dir` outside this process (a load
   * process), which then only opens the entry. Unset: graphs are built here.
   */
  readonly buildElsewhere?: (recipe: GraphRecipe, what: string) => Promise<void>;
}

export interface RunBase {
  readonly info: ModelInfo;
  readonly checkpoint: Checkpoint;
  readonly tokenizer: TokenizerHandle | undefined;
  /** The encoder's runtime process (forward, one-layer, positions and decomposition graphs; the plain heads). */
  readonly session: RuntimeSession;
  readonly maxTokens: number;
  /** The setting or flag that sets maxTokens, named in messages. */
  readonly maxTokensName?: string;
  /** Working memory of one one-layer run in bytes (heads are computed in chunks that fit). */
  readonly layerChunkBytes?: number;
  /** Intra-op threads of the encoder's process; the extra graphs' processes take as many (the heads fewer). */
  readonly threads: number;
  readonly executionProvider?: ExecutionProviderSetting;
  readonly graphCache: GraphCacheSettings;
}
