// One text or a pair of texts → the model's input sequence, as BERT and DeBERTa tokenizers build it:
// [CLS] A [SEP] for one text, [CLS] A [SEP] B [SEP] for a pair, with token type 0 up to and including the
// first [SEP] and 1 after it.
import type { Token } from '../types';
import { encodeWithMasks } from './mask-literal';
import type { ModelInput, Tokenizer } from './types';

export function buildModelInput(tok: Tokenizer, text: string, pair?: string): ModelInput {
  const special = (id: number, fallback: string, at: number): Token => ({
    id,
    text: tok.idToPiece(id) ?? fallback,
    start: at,
    end: at,
    special: true,
  });
  const tokens = [special(tok.special.cls, '[CLS]', 0), ...encodeWithMasks(tok, text), special(tok.special.sep, '[SEP]', text.length)];
  const tokenTypeIds = tokens.map(() => 0);
  if (pair !== undefined) {
    const second = [...encodeWithMasks(tok, pair), special(tok.special.sep, '[SEP]', pair.length)];
    tokens.push(...second);
    tokenTypeIds.push(...second.map(() => 1));
  }
  return { tokens, ids: tokens.map((t) => t.id), tokenTypeIds };
}
