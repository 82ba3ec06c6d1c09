// Messages between the extension host and the Compare Models panel (two models, one text, side by side).
// Types and tiny pure helpers only, like ./lens.ts, the main panel's protocol.
//
//   webview → host  `ready`
//   host → webview  `init`      (both sides: model, tokens, the terms each offers; the token alignment)
//   webview → host  `request`   {id, side, body: one head's matrix of one term}
//   host → webview  `response`  {id, ok, n, data: float32 [n, n]}
//   webview → host  `export`    {format, name, svg | dataUrl}: both sides as one figure, for the save dialog
import type { Answering, Asking } from '../messaging/message-handler';
import type { Alignment } from '../token-alignment';
import { isInt, isOneOf } from './checks';
import type { ColorScaleName } from './lens-names';
import { parseReadyOrLog, type LogMessage, type ReadyMessage } from './page-messages';
import type { Decision } from '../decision';
import type { ProtocolToken } from './token';

export const COMPARE_PROTOCOL_VERSION = 1;

export type Side = 'a' | 'b';
export const SIDES: readonly Side[] = ['a', 'b'];

/**
 * What a side's term picker offers. DeBERTa: its raw terms (c2c, c2p, p2c), their scaled sum and the softmax.
 * BERT: scores and probs in every layer; in layer 0 also the exact split of the score by what entered the
 * embedding (word → c, absolute position → p; `rest`: token type, LayerNorm shift, biases), in score units.
 */
export type CompareKind = 'c2c' | 'c2p' | 'p2c' | 'p2p' | 'rest' | 'scores' | 'probs';
export const COMPARE_KINDS: readonly CompareKind[] = ['c2c', 'c2p', 'p2c', 'p2p', 'rest', 'scores', 'probs'];

export interface CompareSide {
  /** Model name (folder or hub repo) and where it comes from. */
  name: string;
  path: string;
  type: string;
  architecture: 'deberta' | 'bert';
  layers: number[];
  heads: number;
  /** DeBERTa's raw terms (absent for BERT, whose per-layer score is one product). */
  terms: ('c2c' | 'c2p' | 'p2c')[];
  /** BERT: layer 0's four-term split is available. */
  decomposition: boolean;
  tokens: ProtocolToken[];
  ms: number;
  /** A fine-tuned checkpoint's decision on the text (its labels, entities or answer). */
  decision?: Decision;
}

export interface CompareInit {
  /** Changes with every Compare: responses for an older pair are ignored. */
  pairId: number;
  text: string;
  a: CompareSide;
  b: CompareSide;
  /** `ok: false` when the tokenizations could not be aligned (`reason` says why, in one line). */
  alignment: Alignment;
  /** Same pieces at the same offsets on both sides: the Difference view subtracts cell by cell. */
  sameTokens: boolean;
  colorScale: ColorScaleName;
  /** The main panel's layer and head when Compare was asked from it: both sides start there where they have it. */
  start?: { layer: number; head: number };
}

export interface CompareSliceRequest {
  layer: number;
  head: number;
  kind: CompareKind;
}

/** One side's `[n, n]` matrix: float32, as ./matrix-buffer.ts reads it. */
export interface CompareSlice {
  n: number;
  data: ArrayBuffer;
}

/** The one request the view makes: [its body, the host's answer]. */
export type CompareRequests = { slice: [CompareSliceRequest, CompareSlice] };
/** What a request is for besides its body: the pair on screen and the side asked about. */
export interface CompareScope {
  pairId: number;
  side: Side;
}

export type CompareRequestMessage = { type: 'request'; id: number; pairId: number; side: Side; body: CompareSliceRequest };
export type CompareResponseMessage =
  | { type: 'response'; id: number; pairId: number; ok: true; n: number; data: ArrayBuffer }
  | { type: 'response'; id: number; pairId: number; ok: false; error: string };

/** Both sides as one figure (the toolbar's Export): the host asks where to save it and writes it. */
export interface CompareExportMessage {
  type: 'export';
  format: 'png' | 'svg';
  /** The file name the save dialog proposes (letters, digits, `.`, `-`, `_`). */
  name: string;
  svg?: string;
  dataUrl?: string;
}

export type CompareToHost = ReadyMessage | CompareRequestMessage | LogMessage | CompareExportMessage;

export type CompareToWebview =
  | { type: 'init'; init: CompareInit }
  | { type: 'empty'; message: string }
  /** The last comparison failed or was refused: the pair on screen is marked as the previous one (null: clears). */
  | { type: 'stale'; message: string | null }
  | CompareResponseMessage;

/** The view's side of a request on the wire: `request` {id, pairId, side, body} out, `response` {n, data} back. */
export const compareAsking: Asking<CompareRequests, CompareScope, CompareToHost, CompareToWebview> = {
  request: (id, body, { pairId, side }) => ({ type: 'request', id, pairId, side, body }),
  readReply: (m) => {
    if (m.type !== 'response') return undefined;
    return { id: m.id, outcome: m.ok ? { ok: true, reply: { n: m.n, data: m.data } } : { ok: false, error: m.error } };
  },
};

/** The host's side: a validated `request` in (parseCompareMessage), its `response` out. */
export const compareAnswering: Answering<CompareRequests, CompareScope, CompareToWebview, CompareToHost> = {
  readRequest: (m) => (m.type === 'request' ? { id: m.id, body: m.body, scope: { pairId: m.pairId, side: m.side } } : undefined),
  reply: (id, { pairId }, o) =>
    o.ok
      ? { type: 'response', id, pairId, ok: true, n: o.reply.n, data: o.reply.data }
      : { type: 'response', id, pairId, ok: false, error: o.error },
};

/** The terms a side offers in `layer`, in picker order. */
export function kindsFor(side: Pick<CompareSide, 'architecture' | 'terms' | 'decomposition'>, layer: number): CompareKind[] {
  if (side.architecture === 'bert') {
    const split: CompareKind[] = side.decomposition && layer === 0 ? ['c2c', 'c2p', 'p2c', 'p2p', 'rest'] : [];
    return [...split, 'scores', 'probs'];
  }
  return [...side.terms, 'scores', 'probs'];
}

/** Picker labels: what the term is on that architecture. */
export function kindLabel(architecture: 'deberta' | 'bert', kind: CompareKind): string {
  if (kind === 'scores') return architecture === 'bert' ? 'scores (q·k/√d)' : 'scores ((c2c+c2p+p2c)/scale)';
  if (kind === 'probs') return 'probs (softmax)';
  if (architecture === 'bert') {
    const bert: Record<Exclude<CompareKind, 'scores' | 'probs'>, string> = {
      c2c: 'c2c (word→word, layer 0)',
      c2p: 'c2p (word→abs. position, layer 0)',
      p2c: 'p2c (abs. position→word, layer 0)',
      p2p: 'p2p (position→position, layer 0)',
      rest: 'rest (type, LayerNorm shift, biases)',
    };
    return bert[kind];
  }
  const deberta: Partial<Record<CompareKind, string>> = {
    c2c: 'c2c (content→content)',
    c2p: 'c2p (content→rel. position)',
    p2c: 'p2c (rel. position→content)',
  };
  return deberta[kind] ?? kind;
}

/** Units of a term, for the legend: DeBERTa's terms are raw (unscaled), BERT's split is in score units. */
export function kindUnits(architecture: 'deberta' | 'bert', kind: CompareKind): string {
  if (kind === 'probs') return 'probability';
  if (kind === 'scores' || architecture === 'bert') return 'score units (softmax input)';
  return 'raw, before ÷ scale';
}

const isKind = isOneOf(COMPARE_KINDS);

/** Validates a message from the compare webview (untrusted input for the host). */
export function parseCompareMessage(x: unknown): CompareToHost | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const m = x as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'log':
      return parseReadyOrLog(m);
    case 'request': {
      const b = m.body as Record<string, unknown> | undefined;
      if (!b || !isInt(m.id) || !isInt(m.pairId) || (m.side !== 'a' && m.side !== 'b')) return undefined;
      if (!isInt(b.layer) || !isInt(b.head) || !isKind(b.kind)) return undefined;
      return { type: 'request', id: m.id, pairId: m.pairId, side: m.side, body: { layer: b.layer, head: b.head, kind: b.kind } };
    }
    case 'export': {
      if ((m.format !== 'png' && m.format !== 'svg') || typeof m.name !== 'string' || !/^[\w.-]{1,120}$/.test(m.name)) return undefined;
      const image = m.format === 'svg' ? m.svg : m.dataUrl;
      if (typeof image !== 'string') return undefined;
      return { type: 'export', format: m.format, name: m.name, ...(m.format === 'svg' ? { svg: image } : { dataUrl: image }) };
    }
    default:
      return undefined;
  }
}
