// The lens panel's vocabulary: names of views, presets, head picks, export formats and colour mappings, shared
// by its requests, its answers and the state the page keeps.
import { isOneOf } from './checks';

export type ViewName = 'heatmap' | 'heads' | AnalysisView;
/** The analysis views (tabs beside the heatmap and the head grid). */
export type AnalysisView =
  'shares' | 'ablation' | 'distance' | 'buckets' | 'rollout' | 'diff' | 'interventions' | 'ranking' | 'lines' | 'model' | 'patching';
export const ANALYSIS_VIEWS: readonly AnalysisView[] = [
  'shares',
  'ablation',
  'distance',
  'buckets',
  'rollout',
  'diff',
  'interventions',
  'ranking',
  'lines',
  'model',
  'patching',
];
/** How pieces merge into words for the heatmap (same names as analysis/words.ts MergeMode). */
export type MergeModeName = 'words' | 'identifiers';
/** Term subsets the ablation and rollout views offer ('all' = the real model). Same names as analysis/ablation.ts. */
export type AblationPresetName = 'all' | 'content-only' | 'position-only' | 'no-c2c' | 'no-c2p' | 'no-p2c';
export const ABLATION_PRESETS: readonly AblationPresetName[] = ['all', 'content-only', 'position-only', 'no-c2c', 'no-c2p', 'no-p2c'];
/** A head picker entry: one head, or the mean / max over all heads. */
export type HeadPick = number | 'mean' | 'max';
export type ExportFormat = 'png' | 'svg' | 'npz' | 'json' | 'html';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['png', 'svg', 'npz', 'json', 'html'];
export type ColorScaleName = 'diverging' | 'viridis';
/** How a heatmap maps values to colours: linear between robust limits, log10 (probs), or each row to its maximum. */
export type ScalingName = 'linear' | 'log' | 'row' | 'row-log';
export const SCALINGS: readonly ScalingName[] = ['linear', 'log', 'row', 'row-log'];
export const isExportFormat = isOneOf(EXPORT_FORMATS);
