// BERT's tokenizer from vocab.txt, as transformers' BertTokenizer runs it: lower-case everything but the special
// tokens, split out added tokens ("[MASK]" typed in the text stays the mask token), BasicTokenizer words, then
// WordPiece per word. Offsets come from AlignedText: a "##" piece covers its own characters, an unknown word
// all of it. Written here because no npm package reproduces the Python tokenizer with offsets
// (@huggingface/tokenizers implements the tokenizer.json pipelines and returns no offsets).
import { at } from '../../shared/checked';
import type { Token } from '../types';
import { AlignedText, codePointUnits } from './aligned-text';
import { basicTokenize, type BasicOptions, PY_SPACE, splitOnSpace } from './bert-basic';
import { splitAdded } from './byte-level-bpe-tokenizer';
import type { SpecialIds, Tokenizer } from './types';
import { WordPieceModel } from './wordpiece';

export interface WordPieceTokenizerOptions {
  /** Piece of every id (vocab.txt line; added tokens past the vocabulary appended). */
  pieces: string[];
  /** Piece → id; where vocab.txt repeats a line, the later id (as the Python dict it is read into). */
  vocab: ReadonlyMap<string, number>;
  special: SpecialIds;
  /** Added tokens (specials included), matched in the text before anything else. */
  added: ReadonlyMap<string, number>;
  /** Strings the lower-casing pass leaves alone (specials and normalized added tokens). */
  keepCase: readonly string[];
  /** BasicTokenizer's options; undefined when do_basic_tokenize is false (whitespace split only). */
  basic?: BasicOptions;
  /** tokenizer_config.json's never_split: such words go to the vocabulary whole, not through WordPiece. */
  neverSplit: ReadonlySet<string>;
}

export class WordPieceTokenizer implements Tokenizer {
  readonly kind = 'wordpiece' as const;
  readonly special: SpecialIds;
  private readonly wordPiece: WordPieceModel;
  private readonly added: Array<[string, number]>;
  private readonly keepCase: readonly string[]; // longest first
  private readonly keepCaseFirsts: ReadonlySet<number>;

  constructor(private readonly o: WordPieceTokenizerOptions) {
    this.special = o.special;
    this.wordPiece = new WordPieceModel({
      vocab: o.vocab,
      unkId: o.special.unk,
      unkPiece: at(o.pieces, o.special.unk, 'the [UNK] id'),
      prefix: '##',
      maxChars: 100,
    });
    this.added = [...o.added].filter(([c]) => c.length > 0).sort((a, b) => b[0].length - a[0].length);
    this.keepCase = o.keepCase.filter((c) => c.length > 0).sort((a, b) => b.length - a.length);
    this.keepCaseFirsts = new Set(this.keepCase.map((c) => c.charCodeAt(0)));
  }

  get vocabSize(): number {
    return this.o.pieces.length;
  }

  idToPiece(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 ? this.o.pieces[id] : undefined;
  }

  encode(text: string): Token[] {
    let t = AlignedText.of(text);
    if (this.o.basic?.lowercase) t = this.lowercaseOutsideSpecials(t);
    const tokens: Token[] = [];
    const push = (id: number, piece: string, [start, end]: [number, number]) =>
      tokens.push({ id, text: piece, start, end, special: false });
    for (const part of splitAdded(t.text, this.added)) {
      if (part.id !== undefined) {
        push(part.id, t.text.slice(part.start, part.end), t.origRange(part.start, part.end));
        continue;
      }
      const chunk = t.slice(part.start, part.end);
      const words = this.o.basic ? basicTokenize(chunk, this.o.basic) : splitOnSpace(chunk, PY_SPACE);
      for (const w of words) {
        if (this.o.basic && this.o.neverSplit.has(w.text)) {
          push(this.o.added.get(w.text) ?? this.o.vocab.get(w.text) ?? this.special.unk, w.text, w.origRange(0, w.text.length));
          continue;
        }
        for (const p of this.wordPiece.tokenize(w.text)) push(p.id, p.piece, w.origRange(p.start, p.end));
      }
    }
    return tokens;
  }

  /** transformers lower-cases the whole text before splitting out added tokens, character by character,
   *  skipping the special tokens (and normalized added tokens) wherever they occur. */
  private lowercaseOutsideSpecials(t: AlignedText): AlignedText {
    if (t.text.toLowerCase() === t.text) return t;
    const pieces: Array<[number, number]> = [];
    const kept = new Set<number>();
    for (let i = 0; i < t.text.length;) {
      const hit = this.keepCaseFirsts.has(t.text.charCodeAt(i)) ? this.keepCase.find((c) => t.text.startsWith(c, i)) : undefined;
      if (hit) {
        kept.add(pieces.length);
        pieces.push([i, i + hit.length]);
        i += hit.length;
        continue;
      }
      const n = codePointUnits(t.text, i);
      pieces.push([i, i + n]);
      i += n;
    }
    let k = 0;
    return t.mapPieces(pieces, (p) => (kept.has(k++) ? p : p.toLowerCase()));
  }
}
