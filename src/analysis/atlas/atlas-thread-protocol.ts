// Messages between the caller (the extension host) and the atlas thread (./atlas-thread.ts).
import type { EngineOptions, LensErrorCode } from '../../engine';
import type { AtlasJson, AtlasOptions } from './atlas';

export interface AtlasThreadData {
  modelDir: string;
  /** What the thread opens the model with (plain data: no callbacks cross threads). */
  engine: Pick<EngineOptions, 'executionProvider' | 'cacheDir' | 'cacheMaxGB' | 'threads' | 'isolate'>;
  options: Pick<AtlasOptions, 'corpus' | 'window' | 'shard' | 'topK' | 'checkpoint' | 'checkpointEveryMs'>;
}

export type ToAtlasThread = { type: 'cancel' };

export type FromAtlasThread =
  | { type: 'stage'; line: string }
  | { type: 'log'; line: string }
  | { type: 'skip'; line: string }
  | { type: 'progress'; texts: number; windows: number; tokens: number; file: string }
  | { type: 'done'; atlas: AtlasJson }
  | { type: 'failed'; message: string; code?: LensErrorCode };
