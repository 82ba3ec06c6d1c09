// Messages between a caller and its load process (load-process.ts ⇄ isolated-load.ts).
import type { ModelSummary } from '../api';
import type { GraphRecipe } from '../graph/graph-recipes';
import type { LensErrorCode } from '../errors';
import type { WireCheckpoint } from './checkpoint-wire';

export type ToLoader =
  | { type: 'inspect'; dir: string }
  | { type: 'open'; dir: string; cacheDir: string; hashStore: string; maxGB?: number; headGroup?: number }
  /** A graph built on first use, from the checkpoint an earlier 'open' handed over (its byte ranges). */
  | { type: 'build'; checkpoint: WireCheckpoint; recipe: GraphRecipe; cacheDir: string; maxGB?: number };

export type FromLoader =
  /** Every file's structure is read (config, headers, pickle, index): what is left is reading weight bytes. */
  | { type: 'parsed'; weightBytes: number }
  | { type: 'log'; line: string }
  | { type: 'inspected'; summary: ModelSummary }
  | { type: 'opened'; checkpoint: WireCheckpoint; graphBuilt: boolean }
  /** `built`: false when a valid entry was there already; `pid`: the process that built it. */
  | { type: 'built'; built: boolean; buildMs: number; pid: number }
  | { type: 'error'; message: string; code?: LensErrorCode };
