import type { Token } from '../types';
import type { Tokenizer } from './types';

/**
 * Tokenizes text in which the literal mask token ("[MASK]") stands for the mask id, as Hugging Face's tokenizers
 * treat an added special token. Tokenizers that split added tokens out themselves (tokenizer.json, byte-level BPE)
 * are left to do so; for a bare SentencePiece model the text is cut at each literal, every piece between goes
 * through the tokenizer on its own (so SentencePiece drops the space before the literal and adds its word prefix
 * after it), and the literal becomes the mask token, covering its characters. Other special-token literals stay text.
 */
export function encodeWithMasks(tok: Tokenizer, text: string): Token[] {
  const literal = tok.idToPiece(tok.special.mask);
  if (!literal || !text.includes(literal) || splitsMaskItself(tok, literal)) return tok.encode(text);
  const out: Token[] = [];
  let from = 0;
  for (let at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, from)) {
    out.push(...encodeSlice(tok, text, from, at));
    out.push({ id: tok.special.mask, text: literal, start: at, end: at + literal.length, special: true });
    from = at + literal.length;
  }
  out.push(...encodeSlice(tok, text, from, text.length));
  return out;
}

function encodeSlice(tok: Tokenizer, text: string, start: number, end: number): Token[] {
  if (start === end) return [];
  return tok.encode(text.slice(start, end)).map((t) => ({ ...t, start: t.start + start, end: t.end + start }));
}

function splitsMaskItself(tok: Tokenizer, literal: string): boolean {
  const own = tok.encode(literal);
  return own.length === 1 && own[0]?.id === tok.special.mask;
}
