// Messages between the extension host and the head atlas panel (every head of a model over a folder of text), and
// the atlas as the panel sees it. The host reads the atlas JSON that `deberta-lens atlas` writes
// (src/analysis/atlas/) and sends this: the metrics as they are, each top example with its tokens' text.
//
//   webview → host  `ready`, `log`
//   host → webview  `init`   {atlases: one, or two side by side}
//   host → webview  `empty`  {message}
//   webview → host  `open`   {atlas, layer, head, index}: a top example to open in the editor and the lens panel
//   webview → host  `export` {format, name, svg | dataUrl}: the scatter as a figure, for the host to save
import { isInt } from './protocol/checks';
import { parseReadyOrLog, type LogMessage, type ReadyMessage } from './protocol/page-messages';

export const ATLAS_PROTOCOL_VERSION = 1;

/** The metrics of the atlas contract, in table order (a term the model lacks has no share). */
export const ATLAS_METRICS = [
  'c2c_share',
  'c2p_share',
  'p2c_share',
  'mean_distance',
  'entropy',
  'special_mass',
  'max_prob',
  'prev_token',
  'next_token',
] as const;
export type AtlasMetric = (typeof ATLAS_METRICS)[number];

/** One of a head's strongest (query, key) pairs, with the text around it. */
export interface AtlasExample {
  file: string;
  prob: number;
  query: string;
  key: string;
  /** A line of the file around both tokens (`…` where cut). */
  context: string;
}

export interface AtlasHeadView {
  layer: number;
  head: number;
  metrics: Partial<Record<AtlasMetric, number>>;
  top: AtlasExample[];
}

export interface AtlasView {
  /** The file the atlas was read from, and a short name for it (model · corpus). */
  file: string;
  name: string;
  model: string;
  corpus: string;
  texts: number;
  tokens: number;
  layers: number;
  heads: number;
  rows: AtlasHeadView[];
}

export type AtlasToWebview = { type: 'init'; atlases: AtlasView[] } | { type: 'empty'; message: string };

export interface AtlasOpenMessage {
  type: 'open';
  /** 0: the first atlas, 1: the one beside it. */
  atlas: number;
  layer: number;
  head: number;
  index: number;
}

/** The scatter as a figure (the Export buttons): the host asks where to save it and writes it. */
export interface AtlasExportMessage {
  type: 'export';
  format: 'png' | 'svg';
  /** The file name the save dialog proposes (letters, digits, `.`, `-`, `_`). */
  name: string;
  svg?: string;
  dataUrl?: string;
}

export type AtlasToHost = ReadyMessage | LogMessage | AtlasOpenMessage | AtlasExportMessage;

/** Validates a message from the atlas webview (untrusted input for the host). */
export function parseAtlasMessage(x: unknown): AtlasToHost | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const m = x as Record<string, unknown>;
  if (m.type === 'ready' || m.type === 'log') return parseReadyOrLog(m);
  if (m.type === 'open' && isInt(m.atlas) && isInt(m.layer) && isInt(m.head) && isInt(m.index))
    return { type: 'open', atlas: m.atlas, layer: m.layer, head: m.head, index: m.index };
  if (m.type === 'export' && (m.format === 'png' || m.format === 'svg') && typeof m.name === 'string' && /^[\w.-]{1,120}$/.test(m.name)) {
    const image = m.format === 'svg' ? m.svg : m.dataUrl;
    if (typeof image !== 'string') return undefined;
    return { type: 'export', format: m.format, name: m.name, ...(m.format === 'svg' ? { svg: image } : { dataUrl: image }) };
  }
  return undefined;
}
