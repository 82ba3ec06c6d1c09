// Fill-mask in the views: what the host sends the panel (and the editor hover reads), the messages that carry
// it, and how a prediction is written for a person. Pure: imported by the host and the webview.
import type { Decision } from './decision';
import { formatProb } from './format';
import { isInt } from './protocol/checks';

export { formatProb };
import { pieceLabel } from './token-layout';

export interface PredictedToken {
  id: number;
  /** The vocabulary piece as the tokenizer writes it ("▁door"). */
  token: string;
  logit: number;
  /** Softmax over the whole vocabulary. */
  prob: number;
}

export interface PositionPredictions {
  position: number;
  /** input: a [MASK] in the explained text; masked: a token masked on request ("what would the model put here?"). */
  source: 'input' | 'masked';
  top: PredictedToken[];
  /** masked only: how the model rates the token that stood there (rank 1 = its first choice). */
  original?: PredictedToken & { rank: number };
  /** With the Enhanced Mask Decoder (`top` read its second pass): the plain head on the last hidden state, beside it
   *  (what Hugging Face computes), and how it rates the original token. */
  plain?: { top: PredictedToken[]; original?: PredictedToken & { rank: number } };
}

/** The fill-mask of one explained result, as the panel shows it. */
export type FillMask =
  | { state: 'pending' }
  | {
      state: 'ready';
      /** Tokens per position (the debertaLens.predictionTopK setting). */
      k: number;
      /** The masked-LM head's key layout, or null when the checkpoint has only a replaced-token-detection head. */
      mlmHead: string | null;
      /** Every [MASK] of the text, in order. */
      masks: PositionPredictions[];
      /** Replaced-token detection: P(replaced) of every token, when the checkpoint has that head. */
      rtd?: number[];
      /** The result on screen is an intervened run: these are its predictions, after the intervention. */
      intervened?: boolean;
      /** A fine-tuned checkpoint's task head: what it decided (then `masks` is empty and `mlmHead` null). */
      decision?: Decision;
      /** `emd`: the masks' `top` come through DeBERTa's Enhanced Mask Decoder, each with the plain head's beside. */
      decoder?: 'emd' | 'plain';
      /** Why the EMD did not decode this text although the model has one (a text longer than its position table). */
      decoderNote?: string;
    }
  /** Nothing to show, and why (no head, no [MASK] and no RTD head): one line for the panel. */
  | { state: 'none'; message: string }
  | { state: 'error'; message: string };

/** "What would the model put here?" for one token of the result. */
export type TokenPrediction = { position: number } & (
  { state: 'pending' } | { state: 'ready'; prediction: PositionPredictions } | { state: 'error'; message: string }
);

/** Host → webview. */
export type PredictionsToWebview =
  { type: 'fillMask'; resultId: number; fillMask: FillMask } | { type: 'tokenPrediction'; resultId: number; prediction: TokenPrediction };

/** Webview → host: mask token `i` and predict it. */
export interface PredictTokenMessage {
  type: 'predictToken';
  resultId: number;
  i: number;
}

/** Validates a predictToken message from the webview (untrusted input for the host). */
export function parsePredictToken(m: Record<string, unknown>): PredictTokenMessage | undefined {
  return m.type === 'predictToken' && isInt(m.resultId) && isInt(m.i) && m.i >= 0
    ? { type: 'predictToken', resultId: m.resultId, i: m.i }
    : undefined;
}

/** A predicted piece for reading: the word-boundary marker dropped, a lone marker as ␣. */
export function predictedLabel(token: string): string {
  return token.startsWith('[') && token.endsWith(']') ? token : pieceLabel(token);
}

/** "door 45.1%, room 5.5%, window 3.6%": the top tokens on one line. */
export function topLine(p: PositionPredictions, count = p.top.length): string {
  return p.top
    .slice(0, count)
    .map((t) => `${predictedLabel(t.token)} ${formatProb(t.prob)}`)
    .join(', ');
}

/** How the model rates the original token of a masked position: "“opened” 17.6%, rank 1". */
export function originalLine(p: PositionPredictions): string | undefined {
  const o = p.original;
  return o ? `“${predictedLabel(o.token)}” ${formatProb(o.prob)}, rank ${o.rank}` : undefined;
}
