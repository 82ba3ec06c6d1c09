// Messages between the extension host and the DeBERTa Lens webview. Imported by both builds, so it holds
// types and tiny pure helpers only (no `vscode`, no DOM, no Node APIs).
//
// Shape of the conversation:
//   webview → host  `ready`                      (once per page load)
//   host → webview  `init`                       (tokens, model shape, defaults)
//   webview → host  `request` {id, body}         (a slice, a layer of heads, the overview, one query row)
//   host → webview  `response` {id, ok, body}    (matrices as ArrayBuffers of float32, never number arrays)
//   webview → host  `hover` / `state`            (so the editor can light up the same tokens)
//   host → webview  `focus` / `show`             (editor cursor moved onto a token; open a view)
import { isMatrixKind, type MatrixKind, type TermName } from '../kinds';
import { parsePredictToken, type PredictionsToWebview, type PredictTokenMessage } from '../predictions';
import type { RunLabel, RunToHost, RunToWebview } from '../interventions';

export const PROTOCOL_VERSION = 1;

export type ViewName = 'heatmap' | 'heads' | AnalysisView;
/** The analysis views (tabs beside the heatmap and the head grid). */
export type AnalysisView = 'shares' | 'ablation' | 'distance' | 'buckets' | 'rollout' | 'diff' | 'interventions' | 'ranking';
export const ANALYSIS_VIEWS: readonly AnalysisView[] = ['shares', 'ablation', 'distance', 'buckets', 'rollout', 'diff', 'interventions', 'ranking'];
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
export type ScalingName = 'linear' | 'log' | 'row';
export const SCALINGS: readonly ScalingName[] = ['linear', 'log', 'row'];

export interface ProtocolToken {
  i: number;
  text: string;
  /** [start, end) in UTF-16 units of `ViewInit.text`; specials have start === end. */
  start: number;
  end: number;
  special: boolean;
}

export interface ModelShape {
  name: string;
  type: string;
  layers: number[];
  heads: number;
  headDim: number;
  terms: TermName[];
  executionProvider: string;
  scale: number;
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
  ms: number;
  /** The matrix the view last showed, for this result, sent with it: the first heatmap needs no request. */
  first?: SliceResponse;
  /** Set when the result shown is an intervened run (Intervention tab), not the plain explain. */
  run?: RunLabel;
}

// ---- requests (webview → host) and their response bodies ----

/** One head's `[n, n]` matrix. */
export interface SliceRequest {
  type: 'slice';
  layer: number;
  head: number;
  kind: MatrixKind;
  /** 'half': binary16, for a matrix that is only painted (half the bytes); numbers shown come from float32. */
  precision?: 'half';
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
export type RequestBody =
  | WordsRequest
  | DiffRequest
  | SliceRequest
  | HeadsRequest
  | OverviewRequest
  | RowRequest
  | AggregateRequest
  | SharesRequest
  | AblationRequest
  | DistanceRequest
  | BucketsRequest
  | RolloutRequest;

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
}
export type ResponseBody =
  | WordsResponse
  | DiffResponse
  | SliceResponse
  | HeadsResponse
  | OverviewResponse
  | RowResponse
  | AggregateResponse
  | SharesResponse
  | AblationResponse
  | DistanceResponse
  | BucketsResponse
  | RolloutResponse;

/** An export the view asks the host to write: images carry their bytes (PNG data URL, SVG text). */
export interface ExportMessage {
  type: 'export';
  /** Set when the host asked for the image (a command with a target path); echoed back. */
  requestId?: number;
  format: ExportFormat;
  dataUrl?: string;
  svg?: string;
  /** Suggested file name stem (view, layer, head). */
  name?: string;
  /** HTML report: the layers and kinds chosen in the panel (absent = the report's defaults). */
  layers?: number[];
  kinds?: MatrixKind[];
}

export interface HoverInfo {
  /** Query token (row) being inspected, or null when nothing is hovered or pinned. */
  i: number | null;
  layer: number;
  head: number;
  kind: MatrixKind;
  pinned: boolean;
}

/** Sent by every webview of the extension (the lens and compare panels): its protocol version once loaded. */
export type ReadyMessage = { type: 'ready'; version: number };
/** Sent by every webview of the extension: a line for the host's output channel. */
export type LogMessage = { type: 'log'; level: 'info' | 'error'; message: string };

export type WebviewToHost =
  | ReadyMessage
  | { type: 'request'; id: number; resultId: number; body: RequestBody }
  | { type: 'hover'; resultId: number; hover: HoverInfo }
  | LogMessage
  | PredictTokenMessage
  /** The toolbar's "Compare models…" button: the host runs Compare with Another Model. */
  | { type: 'compareModels' }
  | ExportMessage
  | RunToHost;

export type HostToWebview =
  | { type: 'init'; init: ViewInit }
  | { type: 'empty'; message: string }
  | { type: 'response'; id: number; resultId: number; ok: true; body: ResponseBody }
  | { type: 'response'; id: number; resultId: number; ok: false; error: string }
  | { type: 'focus'; resultId: number; i: number | null }
  | { type: 'show'; view: ViewName }
  /** The host wants the current view as an image (export command); the view answers with `export`. */
  | { type: 'exportImage'; requestId: number; format: 'png' | 'svg' }
  /** Fill-mask of the result, and "what would the model put here?" answers (./predictions.ts). */
  | PredictionsToWebview
  | RunToWebview;

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

// ---- helpers shared by both sides ----

/** Copies a float32 view into a fresh, exactly-sized ArrayBuffer (a subarray's buffer is the whole tensor). */
export function toBuffer(values: Float32Array): ArrayBuffer {
  const copy = new Float32Array(values.length);
  copy.set(values);
  return copy.buffer;
}

/** Reads a float32 payload back, checking that its size is what the header promised. */
export function fromBuffer(buf: ArrayBuffer | ArrayBufferView, expectedLength: number): Float32Array {
  // Some transports hand typed arrays (or Node Buffers) instead of bare ArrayBuffers.
  const view = ArrayBuffer.isView(buf)
    ? new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))
    : new Float32Array(buf);
  if (view.length !== expectedLength) {
    throw new RangeError(`payload has ${view.length} floats, expected ${expectedLength}`);
  }
  return view;
}

/** Integer check for validating messages; the compare protocol uses it too. */
export const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);
const isPreset = (x: unknown): x is AblationPresetName => typeof x === 'string' && (ABLATION_PRESETS as readonly string[]).includes(x);
export const isExportFormat = (x: unknown): x is ExportFormat => typeof x === 'string' && (EXPORT_FORMATS as readonly string[]).includes(x);

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
      return isInt(b.layer) && isInt(b.head) && isMatrixKind(b.kind) ? { type: 'diff', layer: b.layer, head: b.head, kind: b.kind } : undefined;
    case 'slice':
      return isInt(b.layer) && isInt(b.head) && isMatrixKind(b.kind)
        ? { type: 'slice', layer: b.layer, head: b.head, kind: b.kind, ...(b.precision === 'half' ? { precision: 'half' as const } : {}) }
        : undefined;
    case 'heads':
      return isInt(b.layer) && isMatrixKind(b.kind) && isInt(b.maxSize) && b.maxSize > 0
        ? { type: 'heads', layer: b.layer, kind: b.kind, maxSize: b.maxSize }
        : undefined;
    case 'overview':
      return isMatrixKind(b.kind) ? { type: 'overview', kind: b.kind } : undefined;
    case 'row':
      return isInt(b.layer) && isInt(b.head) && isInt(b.i)
        ? { type: 'row', layer: b.layer, head: b.head, i: b.i }
        : undefined;
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
    case 'rollout':
      return isPreset(b.preset) ? { type: 'rollout', preset: b.preset } : undefined;
    default:
      return undefined;
  }
}

/** Validates `ready` and `log`, the messages both panels' webviews send; anything else or malformed gives undefined. */
export function parseReadyOrLog(m: Record<string, unknown>): ReadyMessage | LogMessage | undefined {
  if (m.type === 'ready') return isInt(m.version) ? { type: 'ready', version: m.version } : undefined;
  if (m.type === 'log') {
    return typeof m.message === 'string' && (m.level === 'info' || m.level === 'error')
      ? { type: 'log', level: m.level, message: m.message.slice(0, 2000) }
      : undefined;
  }
  return undefined;
}

/** Validates any message from the webview; unknown or malformed messages give undefined. */
export function parseWebviewMessage(x: unknown): WebviewToHost | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const m = x as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'log':
      return parseReadyOrLog(m);
    case 'request': {
      const body = parseRequestBody(m.body);
      return body && isInt(m.id) && isInt(m.resultId) ? { type: 'request', id: m.id, resultId: m.resultId, body } : undefined;
    }
    case 'hover': {
      const h = m.hover as Record<string, unknown> | undefined;
      if (!h || !isInt(m.resultId)) return undefined;
      if (!(h.i === null || isInt(h.i)) || !isInt(h.layer) || !isInt(h.head) || !isMatrixKind(h.kind)) return undefined;
      return {
        type: 'hover',
        resultId: m.resultId,
        hover: { i: h.i, layer: h.layer, head: h.head, kind: h.kind, pinned: h.pinned === true },
      };
    }
    case 'predictToken':
      return parsePredictToken(m);
    case 'compareModels':
      return { type: 'compareModels' };
    case 'export': {
      if (!isExportFormat(m.format)) return undefined;
      const out: ExportMessage = { type: 'export', format: m.format };
      if (isInt(m.requestId)) out.requestId = m.requestId;
      if (typeof m.dataUrl === 'string') out.dataUrl = m.dataUrl;
      if (typeof m.svg === 'string') out.svg = m.svg;
      if (typeof m.name === 'string') out.name = m.name.replace(/[^\w.-]+/g, '-').slice(0, 80);
      if (Array.isArray(m.layers) && m.layers.length <= 1024 && m.layers.every(isInt)) out.layers = m.layers;
      if (Array.isArray(m.kinds) && m.kinds.length <= 8 && m.kinds.every(isMatrixKind)) out.kinds = m.kinds;
      return out;
    }
    default:
      return undefined;
  }
}

/** Correlates requests with responses by id; the webview's only async primitive. */
export class RequestTracker<T> {
  private next = 1;
  private readonly pending = new Map<number, { resolve(v: T): void; reject(e: Error): void }>();

  open(): { id: number; promise: Promise<T> } {
    const id = this.next++;
    const promise = new Promise<T>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    return { id, promise };
  }

  settle(id: number, ok: boolean, value: T | undefined, error?: string): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    if (ok) p.resolve(value as T);
    else p.reject(new Error(error ?? 'request failed'));
    return true;
  }

  /** Rejects everything in flight (a new result replaced the old one). */
  rejectAll(reason: string): void {
    for (const p of this.pending.values()) p.reject(new Error(reason));
    this.pending.clear();
  }

  get size(): number {
    return this.pending.size;
  }
}
