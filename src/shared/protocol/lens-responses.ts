// What the host answers the lens panel's requests with (./lens-requests.ts). Matrices are float32 ArrayBuffers
// (./matrix-buffer.ts), with the sizes that read them back beside them.
import type { MatrixKind, TermName } from '../kinds';
import type { AblationPresetName, HeadPick, MergeModeName } from './lens-names';
import type { Range } from '../value-range';
import type { Pooling } from '../heatmap-picture';

export interface SliceResponse {
  type: 'slice';
  layer: number;
  head: number;
  kind: MatrixKind;
  n: number;
  data: ArrayBuffer; // float32 [n, n], or binary16 bits when `encoding` is 'half'
  encoding?: 'half';
  /** With 'half': the float32 matrix's finite minimum and maximum, for the numbers the legend states. */
  extent?: [number, number];
}
/** A PictureRequest's answer: `side` × `side` steps (uint8, row-major) of an `n` × `n` map, and what they mean. */
export interface PictureResponse {
  type: 'picture';
  layer: number;
  head: number;
  kind: MatrixKind;
  n: number;
  side: number;
  data: ArrayBuffer;
  range: Range;
  pooling: Pooling;
}
/** A TopsRequest's answer: `m` picks a row, int32 column indices (−1: none) and float32 values, `[n, m]` each. */
export interface TopsResponse {
  type: 'tops';
  layer: number;
  head: number;
  kind: MatrixKind;
  n: number;
  m: number;
  idx: ArrayBuffer;
  val: ArrayBuffer;
}
/** Per query token of the EMD's first pass: float32 [n] each (queryPositionShare in ../emd-layers.ts). */
export interface EmdQueryResponse {
  type: 'emdQuery';
  n: number;
  /** ‖P_i‖ / (‖H_i‖ + ‖P_i‖). */
  share: ArrayBuffer;
  contentNorm: ArrayBuffer;
  positionNorm: ArrayBuffer;
}
export interface HeadsResponse {
  type: 'heads';
  layer: number;
  kind: MatrixKind;
  heads: number;
  size: number; // m
  data: ArrayBuffer; // float32 [heads, m, m]
}
/** probs: mean row entropy in nats (low = focused head); other kinds: mean |value|. */
export type OverviewMetric = 'entropy' | 'mean-abs';
export interface OverviewResponse {
  type: 'overview';
  kind: MatrixKind;
  metric: OverviewMetric;
  layers: number[];
  heads: number;
  data: ArrayBuffer; // float32 [layers.length, heads]
}
export interface RowResponse {
  type: 'row';
  layer: number;
  head: number;
  i: number;
  n: number;
  /** One float32 [n] buffer per kind the model has. */
  rows: Partial<Record<MatrixKind, ArrayBuffer>>;
}
export interface AggregateResponse {
  type: 'aggregate';
  layer: number | 'all';
  head: HeadPick;
  kind: MatrixKind;
  discountSpecial: boolean;
  n: number;
  data: ArrayBuffer; // float32 [n, n]
}
export type ShareLabel = 'content' | 'positional' | 'mixed';
export interface SharesResponse {
  type: 'shares';
  weighting: 'uniform' | 'probs';
  layers: number[];
  heads: number;
  /** float32 [layers, heads]: mean |c2c| / (|c2c|+|c2p|+|p2c|); position share is 1 − content. */
  content: ArrayBuffer;
  c2p?: ArrayBuffer;
  p2c?: ArrayBuffer;
  /** BERT ('bert-layer0'): shares of layer 0's exact split, `layers` is [0] and the sum runs over five terms. */
  p2p?: ArrayBuffer;
  rest?: ArrayBuffer;
  split?: 'bert-layer0';
  labels: ShareLabel[];
  thresholds: { content: number; positional: number };
}
export interface AblationResponse {
  type: 'ablation';
  layer: number;
  head: number;
  preset: AblationPresetName;
  kept: TermName[];
  n: number;
  real: ArrayBuffer; // float32 [n, n]
  probs: ArrayBuffer; // float32 [n, n] ablated
  diff: ArrayBuffer; // float32 [n, n] ablated − real
  kl: ArrayBuffer; // float32 [n] KL(real ‖ ablated) per query row, nats
  tv: ArrayBuffer; // float32 [n] total variation per query row
}
export interface ProfileSeries {
  mean: ArrayBuffer; // float32 [2n − 1], index δ + n − 1 (NaN where no cell)
  std: ArrayBuffer; // float32 [2n − 1]
  peakDelta: number;
}
export interface DistanceResponse {
  type: 'distance';
  layer: number;
  head: number;
  query: number | null;
  n: number;
  series: Partial<Record<DistanceSeriesKind, ProfileSeries>>;
  /** BERT: 'bert-layer0' when the series are layer 0's split (c2c, c2p, p2c, p2p from absolute positions),
   *  'bert-none' for a later layer (no separable terms there: probs only). Absent for DeBERTa. */
  split?: 'bert-layer0' | 'bert-none';
}
/** What a distance profile can show: DeBERTa's relative terms, BERT's layer-0 split, the attention itself. */
export type DistanceSeriesKind = 'c2c' | 'c2p' | 'p2c' | 'p2p' | 'probs';
export interface BucketGroupInfo {
  row: number;
  zone: 'exact' | 'log' | 'clamped';
  deltas: number[];
  pairs: number;
}
export interface BucketsResponse {
  type: 'buckets';
  n: number;
  mid: number;
  zones: ('exact' | 'log' | 'clamped')[];
  zoneOf: ArrayBuffer; // float32 [n, n] index into zones
  rowOf: ArrayBuffer; // float32 [n, n] relative-table row ι
  groups: BucketGroupInfo[];
}
export interface RolloutResponse {
  type: 'rollout';
  preset: AblationPresetName;
  layers: number[];
  n: number;
  data: ArrayBuffer; // float32 [n, n]
}
export interface WordGroupInfo {
  /** Token indices of the group, ascending. */
  pieces: number[];
  /** [start, end) in UTF-16 units of `ViewInit.text`. */
  start: number;
  end: number;
  text: string;
  special: boolean;
}
export interface WordsResponse {
  type: 'words';
  layer: number;
  head: HeadPick;
  kind: MatrixKind;
  mode: MergeModeName;
  columns: 'sum' | 'mean';
  groups: WordGroupInfo[];
  n: number; // number of groups W
  data: ArrayBuffer; // float32 [W, W]
}
export interface DiffResponse {
  type: 'diff';
  layer: number;
  head: number;
  kind: MatrixKind;
  /** False when the panel has shown only one result so far (nothing to compare with). */
  hasPrevious: boolean;
  /** Token counts of the previous (A) and current (B) result. */
  nA: number;
  nB: number;
  /** Matched pairs [indexInA, indexInB]; P = pairs.length. */
  pairs: [number, number][];
  /** Piece text of each matched token. */
  labels: string[];
  data: ArrayBuffer; // float32 [P, P]: current − previous
  /** Tokens of the previous text with no partner in the current one (an edit removed them): index in A and text. */
  removed?: { index: number; text: string }[];
}
export type ResponseBody =
  | WordsResponse
  | DiffResponse
  | SliceResponse
  | PictureResponse
  | TopsResponse
  | HeadsResponse
  | OverviewResponse
  | RowResponse
  | AggregateResponse
  | SharesResponse
  | AblationResponse
  | DistanceResponse
  | BucketsResponse
  | RolloutResponse
  | EmdQueryResponse;
