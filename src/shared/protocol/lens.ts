// The lens panel's protocol: the messages between the extension host and the DeBERTa Lens webview, the map of
// its requests to their replies, and the envelope that puts a request and its reply on the wire. Imported by
// both builds, so types and tiny pure helpers only (no `vscode`, no DOM, no Node APIs). What the messages carry
// lives beside it (names, requests, responses, the view's init and saved state) and is re-exported from here.
//
// Shape of the conversation:
//   webview → host  `ready`                      (once per page load)
//   host → webview  `init`                       (tokens, model shape, defaults)
//   webview → host  `request` {id, body}         (a slice, a layer of heads, the overview, one query row)
//   host → webview  `response` {id, ok, body}    (matrices as ArrayBuffers of float32, never number arrays)
//   webview → host  `hover`                      (so the editor can light up the same tokens)
//   host → webview  `focus` / `show`             (editor cursor moved onto a token; open a view)
import { isMatrixKind, type MatrixKind } from '../kinds';
import { parsePredictToken, type PredictionsToWebview, type PredictTokenMessage } from '../predictions';
import type { RunToHost, RunToWebview } from '../interventions';
import { parseShowChoiceMessage, type ShowChoiceMessage } from '../decision';
import { parseOcclusionMessage, type CancelOcclusionMessage, type OccludeMessage, type OcclusionMessage } from '../occlusion';
import type { Answering, Asking, ReplyTo } from '../messaging/message-handler';
import { isInt } from './checks';
import { isExportFormat, type ExportFormat, type ViewName } from './lens-names';
import {
  parseRequestBody,
  type AblationRequest,
  type AggregateRequest,
  type BucketsRequest,
  type DiffRequest,
  type DistanceRequest,
  type EmdQueryRequest,
  type HeadsRequest,
  type OverviewRequest,
  type RequestBody,
  type RolloutRequest,
  type RowRequest,
  type SharesRequest,
  type SliceRequest,
  type PictureRequest,
  type TopsRequest,
  type WordsRequest,
} from './lens-requests';
import type {
  AblationResponse,
  AggregateResponse,
  BucketsResponse,
  DiffResponse,
  DistanceResponse,
  EmdQueryResponse,
  HeadsResponse,
  OverviewResponse,
  ResponseBody,
  RolloutResponse,
  RowResponse,
  SharesResponse,
  SliceResponse,
  PictureResponse,
  TopsResponse,
  WordsResponse,
} from './lens-responses';
import type { ViewInit } from './lens-view';
import { parseReadyOrLog, type LogMessage, type ReadyMessage } from './page-messages';

export * from './lens-names';
export * from './lens-requests';
export * from './lens-responses';
export * from './lens-view';
export * from './matrix-buffer';
export * from './page-messages';
export type { ProtocolToken } from './token';

export const PROTOCOL_VERSION = 1;

/** Each request the view makes, by name: [its body, the host's answer]. */
export type LensRequests = {
  slice: [SliceRequest, SliceResponse];
  picture: [PictureRequest, PictureResponse];
  tops: [TopsRequest, TopsResponse];
  heads: [HeadsRequest, HeadsResponse];
  overview: [OverviewRequest, OverviewResponse];
  row: [RowRequest, RowResponse];
  aggregate: [AggregateRequest, AggregateResponse];
  shares: [SharesRequest, SharesResponse];
  ablation: [AblationRequest, AblationResponse];
  distance: [DistanceRequest, DistanceResponse];
  buckets: [BucketsRequest, BucketsResponse];
  rollout: [RolloutRequest, RolloutResponse];
  words: [WordsRequest, WordsResponse];
  diff: [DiffRequest, DiffResponse];
  emdQuery: [EmdQueryRequest, EmdQueryResponse];
};
/** The answer to request body B (a SliceRequest is answered with a SliceResponse). */
export type LensReply<B extends RequestBody> = ReplyTo<LensRequests, B>;
/** What a request is for besides its body: the result on screen (an answer for an older one is ignored). */
export interface LensScope {
  resultId: number;
}

/** A figure's size (PNG and SVG exports): width in centimetres, PNG dots per inch; absent = the view's last choice. */
export interface FigureSize {
  widthCm?: number;
  dpi?: number;
}

/** The figure size in `a` (a command's arguments), each value kept only when it is a sensible number. */
export function parseFigureSize(a: Record<string, unknown>): FigureSize {
  const out: FigureSize = {};
  if (typeof a.widthCm === 'number' && a.widthCm >= 2 && a.widthCm <= 100) out.widthCm = a.widthCm;
  if (typeof a.dpi === 'number' && a.dpi >= 36 && a.dpi <= 1200) out.dpi = a.dpi;
  return out;
}

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

export type LensRequestMessage = { type: 'request'; id: number; resultId: number; body: RequestBody };
export type LensResponseMessage =
  | { type: 'response'; id: number; resultId: number; ok: true; body: ResponseBody }
  | { type: 'response'; id: number; resultId: number; ok: false; error: string };

export type WebviewToHost =
  | ReadyMessage
  | LensRequestMessage
  | { type: 'hover'; resultId: number; hover: HoverInfo }
  | LogMessage
  | PredictTokenMessage
  /** The toolbar's "Compare models…" button: the host runs Compare with Another Model. */
  | { type: 'compareModels'; layer?: number; head?: number }
  | ExportMessage
  | OccludeMessage
  | CancelOcclusionMessage
  | ShowChoiceMessage
  | RunToHost;

export type HostToWebview =
  | { type: 'init'; init: ViewInit }
  | { type: 'empty'; message: string }
  /** The last explain failed or was refused: the view marks what it shows as the previous result (null: clears). */
  | { type: 'stale'; message: string | null }
  | LensResponseMessage
  | { type: 'focus'; resultId: number; i: number | null }
  | { type: 'show'; view: ViewName }
  /** The host wants the current view as an image (export command); the view answers with `export`. */
  | ({ type: 'exportImage'; requestId: number; format: 'png' | 'svg' } & FigureSize)
  /** Fill-mask of the result, and "what would the model put here?" answers (../predictions.ts). */
  | PredictionsToWebview
  | OcclusionMessage
  | RunToWebview;

/** The view's side of a request on the wire: `request` {id, resultId, body} out, `response` back. */
export const lensAsking: Asking<LensRequests, LensScope, WebviewToHost, HostToWebview> = {
  request: (id, body, { resultId }) => ({ type: 'request', id, resultId, body }),
  readReply: (m) => {
    if (m.type !== 'response') return undefined;
    return { id: m.id, outcome: m.ok ? { ok: true, reply: m.body } : { ok: false, error: m.error } };
  },
};

/** The host's one request of the view: its current picture, for the export command. */
export type ImageRequests = { image: [{ format: 'png' | 'svg' } & FigureSize, ExportMessage] };

/** The host's side of an image request: `exportImage` {requestId} out, `export` with that requestId back. */
export const imageAsking: Asking<ImageRequests, void, HostToWebview, WebviewToHost> = {
  request: (requestId, body) => ({ type: 'exportImage', requestId, ...body }),
  readReply: (m) => (m.type === 'export' && m.requestId !== undefined ? { id: m.requestId, outcome: { ok: true, reply: m } } : undefined),
};

/** The host's side: a validated `request` in (parseWebviewMessage), its `response` out. */
export const lensAnswering: Answering<LensRequests, LensScope, HostToWebview, WebviewToHost> = {
  readRequest: (m) => (m.type === 'request' ? { id: m.id, body: m.body, scope: { resultId: m.resultId } } : undefined),
  reply: (id, { resultId }, o) =>
    o.ok ? { type: 'response', id, resultId, ok: true, body: o.reply } : { type: 'response', id, resultId, ok: false, error: o.error },
};

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
    case 'occlude':
    case 'cancelOcclusion':
      return parseOcclusionMessage(m);
    case 'showChoice':
      return parseShowChoiceMessage(m);
    case 'compareModels': {
      // The main panel's layer and head, where the comparison starts.
      const out: { type: 'compareModels'; layer?: number; head?: number } = { type: 'compareModels' };
      if (isInt(m.layer) && m.layer >= 0) out.layer = m.layer;
      if (isInt(m.head) && m.head >= 0) out.head = m.head;
      return out;
    }
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
