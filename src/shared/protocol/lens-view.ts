// What the lens panel's view is given and keeps: the model's shape, the result the host sends with `init`, and
// the reader's state the page saves. Types and tiny pure helpers only.
import type { MatrixKind, TermName } from '../kinds';
import type { RunLabel } from '../interventions';
import type { EmdShape } from '../emd-layers';
import type { AblationPresetName, ColorScaleName, MergeModeName, ScalingName, ViewName } from './lens-names';
import type { SliceResponse } from './lens-responses';
import type { ProtocolToken } from './token';

export interface ModelShape {
  name: string;
  type: string;
  layers: number[];
  heads: number;
  headDim: number;
  terms: TermName[];
  executionProvider: string;
  scale: number;
  /** The Enhanced Mask Decoder's two passes, listed after `layers` in the pickers (absent: the model has none). */
  emd?: EmdShape;
}

/** BERT: absolute positions, one q·k score per layer; only layer 0's score splits by embedding part. */
export function isBertModel(model: Pick<ModelShape, 'type'>): boolean {
  return model.type === 'bert';
}

export interface ViewDefaults {
  term: MatrixKind;
  view: ViewName;
  colorScale: ColorScaleName;
}

export interface ViewInit {
  /** Increases with every Explain: responses for an older result are ignored. */
  resultId: number;
  text: string;
  tokens: ProtocolToken[];
  model: ModelShape;
  defaults: ViewDefaults;
  /** Where this result opens instead of the reader's last place (the head atlas's examples): heatmap of that layer
   *  and head, with query row `row` pinned (null: none). */
  openAt?: { layer: number; head: number; row: number | null };
  ms: number;
  /** The matrix the view last showed, for this result, sent with it: the first heatmap needs no request. */
  first?: SliceResponse;
  /** Set when the result shown is an intervened run (Intervention tab), not the plain explain. */
  run?: RunLabel;
}

/** What the webview keeps in `setState` and the serializer gets back after a reload. */
export interface PersistedState {
  version: number;
  view: ViewName;
  term: MatrixKind;
  layer: number;
  head: number;
  pinned: number | null;
  compare: number[];
  colorScale: ColorScaleName;
  /** The result the state was saved for (a pin only makes sense for that text). */
  resultId?: number;
  /** Head picker 'mean' / 'max' (overrides `head` in the heatmap); absent = one head. */
  headAgg?: 'mean' | 'max' | null;
  /** Zero [CLS]/[SEP] key columns of probs and renormalise. */
  discountSpecial?: boolean;
  /** Ablation / rollout preset of the analysis views. */
  preset?: AblationPresetName;
  /** Heatmap and strip show word groups instead of pieces; absent = pieces. */
  merge?: MergeModeName | null;
  /** Colour mapping of the heatmaps; absent = linear between robust limits. */
  scaling?: ScalingName;
}
