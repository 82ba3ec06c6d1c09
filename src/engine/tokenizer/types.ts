import type { Token, TokenizerKind } from '../types';

/** Ids of the special tokens DeBERTa's input layout uses. */
export interface SpecialIds {
  pad: number;
  cls: number;
  sep: number;
  unk: number;
  mask: number;
}

/** One text or a pair as the model reads it (built by model-input.ts). */
export interface ModelInput {
  /** Offsets of A's tokens are into `text`, of B's into `pair`; a special token has an empty range where it
   *  stands (the [SEP] closing a text at that text's end). */
  tokens: Token[];
  ids: number[];
  /** 0 for [CLS], A and the first [SEP]; 1 for B and the last [SEP]. */
  tokenTypeIds: number[];
}

/** A loaded tokenizer. `encode` returns the text's tokens only (no [CLS]/[SEP]); offsets are [start, end)
 *  in UTF-16 code units of `text`, so they map straight onto VS Code positions. */
export interface Tokenizer {
  readonly kind: TokenizerKind;
  readonly special: SpecialIds;
  readonly vocabSize: number;
  encode(text: string): Token[];
  /** The vocabulary piece of an id (for `--ids` input and display), or undefined when out of range. */
  idToPiece(id: number): string | undefined;
}

/** A tokenizer that runs elsewhere (a worker thread) under a time budget: what the explain path uses, so no
 *  tokenization holds the caller's thread. Rejects with LensError('cancelled') when `signal` aborts. */
export interface TokenizerHandle {
  readonly kind: TokenizerKind;
  readonly special: SpecialIds;
  readonly vocabSize: number;
  encode(text: string, signal?: AbortSignal): Promise<Token[]>;
  /** The model's input for a text (or a pair): [CLS] A [SEP] (B [SEP]), a written [MASK] as the mask token. */
  modelInput(text: string, pair?: string, signal?: AbortSignal): Promise<ModelInput>;
  /** Vocabulary pieces of ids (undefined where out of range). */
  pieces(ids: number[], signal?: AbortSignal): Promise<(string | undefined)[]>;
  dispose(): Promise<void>;
}
