// Activation patching's public types (OpenModel.patch; exported by the engine's front door). Types only.
import type { OcclusionTargetInfo, PredictResult, SweepTarget } from '../api';
import type { ModelInfo, TermName, Token } from '../types';
import type { FlowGrid } from './patch-flow';

/** A grid instead of one patch: every head's term alone (layer × head per term), every state row alone (layer ×
 *  position, the causal trace), or the attention edges that carry the target (./patch-flow.ts). */
export type PatchTrace = 'heads' | 'resid' | 'flow';

export interface PatchInput {
  /** The clean text (and its pair), or ids fed as given. */
  text?: string;
  pair?: string;
  ids?: number[];
  /** The corrupted text (and its pair), or ids. Of another length, its tokens pair with the clean ones
   *  (./patch-align.ts) and only states and knockouts can be put in. */
  corrupt?: string;
  corruptPair?: string;
  corruptIds?: number[];
  /** What is put in (./patch-spec.ts): "1.0:c2p,resid:3@5,…"; empty = nothing (the corrupted run). */
  patch?: string;
  trace?: PatchTrace;
  /** The flow trace keeps an edge whose knockout moves the target by more than this; default 0.1 × |clean −
   *  corrupt| (0.01 when they are equal; the flow needs no corrupted text). */
  threshold?: number;
  /** What is measured, as for sweep and occlusion; default the clean run's own decision. */
  target?: SweepTarget;
  /** Masked-LM: the followed position (default the first [MASK]); token classification and RTD: the token. */
  position?: number;
  /** false: one rerun per cell instead of a start layer's cells as batched runs (the same numbers; benchmarks). */
  batch?: boolean;
  onProgress?: (p: { done: number; total: number; layer: number }) => void;
}

export type PatchTargetInfo = OcclusionTargetInfo | { kind: 'rtd'; position: number; logit_before: number };

/** A trace's grid, axes named: heads → restored[term][layer][head]; resid → restored[layer][position] (layer =
 *  the state entering that layer, `layers` = the final state). `value` holds the raw patched values alike. */
export type PatchGrid =
  | {
      kind: 'heads';
      axes: ['term', 'layer', 'head'];
      terms: TermName[];
      restored: Partial<Record<TermName, (number | null)[][]>>;
      value: Partial<Record<TermName, number[][]>>;
    }
  | { kind: 'resid'; axes: ['layer', 'position']; restored: (number | null)[][]; value: number[][] }
  | FlowGrid;

export interface PatchResult {
  model: ModelInfo;
  input_ids: number[];
  tokens: Token[];
  corrupt_ids: number[];
  corrupt_tokens: Token[];
  target: PatchTargetInfo;
  /** The target's value on the clean and on the corrupted run. */
  clean_value: number;
  corrupt_value: number;
  /** What predict gives on each run (the patched one: when a patch spec was given). */
  clean: PredictResult;
  corrupt: PredictResult;
  patched?: PredictResult;
  /** The patch as run: its parts, the first layer rerun, the target's value and (patched − corrupt) / (clean −
   *  corrupt), null when clean and corrupt give the same value. */
  patch?: { entries: string[]; first_layer: number; value: number; restored: number | null };
  grid?: PatchGrid;
  /** When the texts tokenize to different lengths: for each clean position, the corrupted position its values go
   *  to, or null (no counterpart; its cells are null). Positions everywhere else are the clean text's. */
  paired?: (number | null)[];
  timings: { forward_ms: number; rerun_ms: number; head_ms: number; reruns: number; runs: number; batch_size: number; total_ms: number };
}
