// WordPiece segmentation of one word (BERT's WordpieceTokenizer, and the WordPiece model of a tokenizer.json):
// greedy longest match from the left over code points, later pieces carrying the continuation prefix ("##").
// A word with any character no piece covers, or longer than the character limit, becomes one unknown token.
import { stageId } from './stages';
import type { WordModel } from './hf-json-tokenizer';

export interface WordPieceOptions {
  vocab: ReadonlyMap<string, number>;
  unkId: number;
  unkPiece: string;
  /** Prefix of pieces that continue a word (Hugging Face's continuing_subword_prefix). */
  prefix: string;
  /** Words with more code points than this become the unknown token (Hugging Face's default is 100). */
  maxChars: number;
}

export interface WordPieceOut {
  id: number;
  piece: string;
  start: number;
  end: number;
}

export class WordPieceModel implements WordModel {
  readonly stage = stageId('model WordPiece');
  /** Longest vocabulary entry in UTF-16 units: longer candidates are not looked up (a 100-character word of
   *  unknown text would otherwise cost 5,000 lookups). */
  private readonly longest: number;

  constructor(private readonly o: WordPieceOptions) {
    let longest = 0;
    for (const p of o.vocab.keys()) longest = Math.max(longest, p.length);
    this.longest = longest;
  }

  /** The word's pieces; start/end are UTF-16 ranges within `word`. An unknown word is one piece over all of it. */
  tokenize(word: string): WordPieceOut[] {
    const unk = [{ id: this.o.unkId, piece: this.o.unkPiece, start: 0, end: word.length }];
    // UTF-16 position of each code point boundary.
    const at: number[] = [0];
    for (const ch of word) at.push(at[at.length - 1]! + ch.length);
    const n = at.length - 1;
    if (n === 0) return [];
    if (n > this.o.maxChars) return unk;
    const out: WordPieceOut[] = [];
    for (let s = 0; s < n;) {
      let found: WordPieceOut | undefined;
      const pre = s > 0 ? this.o.prefix : '';
      let e = n;
      while (e > s && pre.length + at[e]! - at[s]! > this.longest) e--;
      for (; e > s; e--) {
        const piece = pre + word.slice(at[s], at[e]);
        const id = this.o.vocab.get(piece);
        if (id !== undefined) {
          found = { id, piece, start: at[s]!, end: at[e]! }; // s < e ≤ n: `at` has n + 1 entries
          s = e;
          break;
        }
      }
      if (!found) return unk;
      out.push(found);
    }
    return out;
  }
}
