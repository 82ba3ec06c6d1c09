// The lens panel's requests (webview → host): one body per request, and their validation on the host, where a
// body is untrusted input. What each answers with is in ./lens-responses.ts; the pairs are LensRequests (./lens.ts).
import { isMatrixKind, type MatrixKind } from '../kinds';
import { isInt, isOneOf } from './checks';
import { ABLATION_PRESETS, SCALINGS, type AblationPresetName, type HeadPick, type MergeModeName, type ScalingName } from './lens-names';

/** One head's `[n, n]` matrix. */
export interface SliceRequest {
  type: 'slice';
  layer: number;
  head: number;
  kind: MatrixKind;
  /** 'half': binary16, for a matrix that is only painted (half the bytes); numbers shown come from float32. */
  precision?: 'half';
}
/**
 * One head's map as colour-ramp steps pooled to `side` pixels a side (heatmap-picture.ts): what a long input's
 * heatmap shows, at the size the screen draws it, under `scaling` (the view's effective choice).
 */
export interface PictureRequest {
  type: 'picture';
  layer: number;
  head: number;
  kind: MatrixKind;
  scaling: ScalingName;
  side: number;
}
/** Each query row's hover neighbours in one head (hover.ts rowTops): a long input's picture has no values. */
export interface TopsRequest {
  type: 'tops';
  layer: number;
  head: number;
  kind: MatrixKind;
  k: number;
}
/** Every head of a layer, block-averaged down to at most `maxSize` × `maxSize` each: `[heads, m, m]`. */
export interface HeadsRequest {
  type: 'heads';
  layer: number;
  kind: MatrixKind;
  maxSize: number;
}
/** One number per (layer, head): `[layers, heads]` (see OverviewMetric). */
export interface OverviewRequest {
  type: 'overview';
  kind: MatrixKind;
}
/** Query row `i` of every kind the model has, for the exact hover readout. */
export interface RowRequest {
  type: 'row';
  layer: number;
  head: number;
  i: number;
}
/**
 * `[n, n]` reduced over heads (`head` 'mean' | 'max', or one head) of one layer, or of every layer
 * (`layer` 'all'); `discountSpecial` zeroes the [CLS]/[SEP] key columns and renormalises rows (probs only).
 */
export interface AggregateRequest {
  type: 'aggregate';
  layer: number | 'all';
  head: HeadPick;
  kind: MatrixKind;
  discountSpecial: boolean;
}
/** Layer × head content/position shares of the attention scores. */
export interface SharesRequest {
  type: 'shares';
  weighting: 'uniform' | 'probs';
}
/** Softmax of a subset of the terms for one head, beside the real probs. */
export interface AblationRequest {
  type: 'ablation';
  layer: number;
  head: number;
  preset: AblationPresetName;
}
/** c2p, p2c and probs of one head collapsed onto δ = i − j (all rows, or query row `query`). */
export interface DistanceRequest {
  type: 'distance';
  layer: number;
  head: number;
  query: number | null;
}
/** Which (query, key) pairs see their exact distance and which share a log bucket. */
export interface BucketsRequest {
  type: 'buckets';
}
/** Attention rollout over all layers, of the real probs or of an ablation preset. */
export interface RolloutRequest {
  type: 'rollout';
  preset: AblationPresetName;
}
/**
 * One head (or 'mean' / 'max' over heads) of one layer pooled onto word groups (analysis/words.ts):
 * rows mean over a word's pieces; columns sum (probs) or mean (raw terms and scores).
 */
export interface WordsRequest {
  type: 'words';
  layer: number;
  head: HeadPick;
  kind: MatrixKind;
  mode: MergeModeName;
}
/** The current result minus the panel's previous one, one head, over tokens matched by piece text. */
export interface DiffRequest {
  type: 'diff';
  layer: number;
  head: number;
  kind: MatrixKind;
}
/** The EMD's first-pass query split into content H and absolute positions P (../emd-layers.ts). */
export interface EmdQueryRequest {
  type: 'emdQuery';
}
export type RequestBody =
  | EmdQueryRequest
  | WordsRequest
  | DiffRequest
  | SliceRequest
  | PictureRequest
  | TopsRequest
  | HeadsRequest
  | OverviewRequest
  | RowRequest
  | AggregateRequest
  | SharesRequest
  | AblationRequest
  | DistanceRequest
  | BucketsRequest
  | RolloutRequest;

const isPreset = isOneOf(ABLATION_PRESETS);
const isScaling = isOneOf(SCALINGS);
/** The largest picture a view may ask for (px a side): a 4K screen's height at twice its pixels. */
const MAX_PICTURE_SIDE = 8192;

/** Validates a request body coming from the webview (it is untrusted input for the host). */
export function parseRequestBody(x: unknown): RequestBody | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const b = x as Record<string, unknown>;
  switch (b.type) {
    case 'words':
      return isInt(b.layer) && (isInt(b.head) || b.head === 'mean' || b.head === 'max') && isMatrixKind(b.kind)
        ? { type: 'words', layer: b.layer, head: b.head, kind: b.kind, mode: b.mode === 'identifiers' ? 'identifiers' : 'words' }
        : undefined;
    case 'diff':
      return isInt(b.layer) && isInt(b.head) && isMatrixKind(b.kind)
        ? { type: 'diff', layer: b.layer, head: b.head, kind: b.kind }
        : undefined;
    case 'slice':
      return isInt(b.layer) && isInt(b.head) && isMatrixKind(b.kind)
        ? { type: 'slice', layer: b.layer, head: b.head, kind: b.kind, ...(b.precision === 'half' ? { precision: 'half' as const } : {}) }
        : undefined;
    case 'picture':
      return isInt(b.layer) &&
        isInt(b.head) &&
        isMatrixKind(b.kind) &&
        isScaling(b.scaling) &&
        isInt(b.side) &&
        b.side > 0 &&
        b.side <= MAX_PICTURE_SIDE
        ? { type: 'picture', layer: b.layer, head: b.head, kind: b.kind, scaling: b.scaling, side: b.side }
        : undefined;
    case 'tops':
      return isInt(b.layer) && isInt(b.head) && isMatrixKind(b.kind) && isInt(b.k) && b.k > 0 && b.k <= 64
        ? { type: 'tops', layer: b.layer, head: b.head, kind: b.kind, k: b.k }
        : undefined;
    case 'heads':
      return isInt(b.layer) && isMatrixKind(b.kind) && isInt(b.maxSize) && b.maxSize > 0
        ? { type: 'heads', layer: b.layer, kind: b.kind, maxSize: b.maxSize }
        : undefined;
    case 'overview':
      return isMatrixKind(b.kind) ? { type: 'overview', kind: b.kind } : undefined;
    case 'row':
      return isInt(b.layer) && isInt(b.head) && isInt(b.i) ? { type: 'row', layer: b.layer, head: b.head, i: b.i } : undefined;
    case 'aggregate':
      return (isInt(b.layer) || b.layer === 'all') && (isInt(b.head) || b.head === 'mean' || b.head === 'max') && isMatrixKind(b.kind)
        ? { type: 'aggregate', layer: b.layer, head: b.head, kind: b.kind, discountSpecial: b.discountSpecial === true }
        : undefined;
    case 'shares':
      return { type: 'shares', weighting: b.weighting === 'probs' ? 'probs' : 'uniform' };
    case 'ablation':
      return isInt(b.layer) && isInt(b.head) && isPreset(b.preset)
        ? { type: 'ablation', layer: b.layer, head: b.head, preset: b.preset }
        : undefined;
    case 'distance':
      return isInt(b.layer) && isInt(b.head) && (b.query === null || b.query === undefined || isInt(b.query))
        ? { type: 'distance', layer: b.layer, head: b.head, query: isInt(b.query) ? b.query : null }
        : undefined;
    case 'buckets':
      return { type: 'buckets' };
    case 'emdQuery':
      return { type: 'emdQuery' };
    case 'rollout':
      return isPreset(b.preset) ? { type: 'rollout', preset: b.preset } : undefined;
    default:
      return undefined;
  }
}
