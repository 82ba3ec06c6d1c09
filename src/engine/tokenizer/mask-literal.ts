import type { Token } from '../types';
import type { Tokenizer } from './types';

/**
 * Tokenizes text in which a written special token ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]") stands for its id,
 * as Hugging Face's DebertaV2Tokenizer does: its special tokens are cut out of the text whole (the tokens trie)
 * before SentencePiece sees the pieces between. Tokenizers that split them out themselves (tokenizer.json,
 * byte-level BPE) are left to do so; for a bare SentencePiece model the text is cut at each literal (the longest at
 * a position first), every piece between goes through the tokenizer on its own (so SentencePiece drops the space
 * before the literal and adds its word prefix after it), and the literal becomes its special token, covering its
 * characters. test/data/fixtures/tokenizer/special_literals.json holds Hugging Face's own ids for such texts.
 */
export function encodeWithSpecials(tok: Tokenizer, text: string): Token[] {
  const literals = specialLiterals(tok).filter((l) => text.includes(l.text));
  if (literals.length === 0) return tok.encode(text);
  const out: Token[] = [];
  let from = 0;
  for (;;) {
    let hit: { at: number; text: string; id: number } | undefined;
    for (const l of literals) {
      const at = text.indexOf(l.text, from);
      if (at >= 0 && (hit === undefined || at < hit.at || (at === hit.at && l.text.length > hit.text.length))) hit = { at, ...l };
    }
    if (hit === undefined) break;
    out.push(...encodeSlice(tok, text, from, hit.at));
    out.push({ id: hit.id, text: hit.text, start: hit.at, end: hit.at + hit.text.length, special: true });
    from = hit.at + hit.text.length;
  }
  out.push(...encodeSlice(tok, text, from, text.length));
  return out;
}

/** The name model-input.ts imports; [MASK] was the first literal read this way. */
export const encodeWithMasks = encodeWithSpecials;

/** The special tokens' written forms that the tokenizer would otherwise cut into pieces. */
function specialLiterals(tok: Tokenizer): { text: string; id: number }[] {
  const { cls, sep, unk, pad, mask } = tok.special;
  const out: { text: string; id: number }[] = [];
  for (const id of [cls, sep, unk, pad, mask]) {
    const text = tok.idToPiece(id);
    if (!text || out.some((l) => l.text === text) || splitsItself(tok, text, id)) continue;
    out.push({ text, id });
  }
  return out;
}

function encodeSlice(tok: Tokenizer, text: string, start: number, end: number): Token[] {
  if (start === end) return [];
  return tok.encode(text.slice(start, end)).map((t) => ({ ...t, start: t.start + start, end: t.end + start }));
}

function splitsItself(tok: Tokenizer, literal: string, id: number): boolean {
  const own = tok.encode(literal);
  return own.length === 1 && own[0]?.id === id;
}
