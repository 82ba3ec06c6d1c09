// A Hugging Face tokenizer.json (Unigram for DeBERTa v2/v3, byte-level BPE for v1): added tokens split out
// first, then normalizer → pre-tokenizer → model, offsets carried through AlignedText.
import { at, last } from '../../shared/checked';
import type { Token } from '../types';
import { AlignedText } from './aligned-text';
import { BpeModel } from './bpe';
import { byteChar } from './byte-level';
import { splitAdded } from './byte-level-bpe-tokenizer';
import { type Normalizer, type PreTokenizerInfo } from './hf-pipeline';
import { enterStage, stageId } from './stages';
import type { SpecialIds, Tokenizer } from './types';
import { UnigramModel } from './unigram';
import { encodeUtf8WithMap } from './utf8';

/** Segments one pre-token; offsets are UTF-16 ranges within that pre-token's text. */
export interface WordModel {
  /** The model's stage (see stages.ts), entered before each word. */
  readonly stage: number;
  tokenize(word: string): Array<{ id: number; piece: string; start: number; end: number }>;
}

export class UnigramWordModel implements WordModel {
  readonly stage = stageId('model Unigram');
  constructor(
    private readonly model: UnigramModel,
    private readonly pieces: string[],
    private readonly byteIds: Map<number, number> | undefined,
  ) {}

  /** The piece of an id the model produced (its ids index its own pieces). */
  private pieceOf(id: number): string {
    return at(this.pieces, id, 'token id');
  }

  tokenize(word: string) {
    const u = encodeUtf8WithMap(word);
    const out: Array<{ id: number; piece: string; start: number; end: number }> = [];
    let prevUnk = false;
    for (const seg of this.model.encode(u.bytes)) {
      // Segments cover bytes of the word: both maps have an entry for each.
      const start = u.byteToUtf16[seg.start]!;
      const end = u.charEndUtf16[seg.end - 1]!;
      const piece = word.slice(start, end);
      if (seg.unk && this.byteIds && [...u.bytes.subarray(seg.start, seg.end)].every((b) => this.byteIds!.has(b))) {
        for (let k = seg.start; k < seg.end; k++) {
          const id = this.byteIds.get(u.bytes[k]!)!;
          out.push({ id, piece: this.pieceOf(id), start, end });
        }
      } else if (seg.unk && prevUnk) {
        const prev = last(out, 'the pieces so far'); // Hugging Face fuses runs of unknowns, like SentencePiece
        prev.piece += piece;
        prev.end = end;
      } else {
        out.push({ id: seg.id, piece: seg.unk ? piece : this.pieceOf(seg.id), start, end });
      }
      prevUnk = seg.unk;
    }
    return out;
  }
}

export class BpeWordModel implements WordModel {
  readonly stage = stageId('model BPE (merges)');
  private readonly bpe: BpeModel;
  constructor(
    merges: ReadonlyArray<readonly [string, string]>,
    private readonly vocab: ReadonlyMap<string, number>,
    private readonly unkId: number,
    private readonly byteLevel: boolean,
  ) {
    this.bpe = new BpeModel(merges);
  }

  tokenize(word: string) {
    const out: Array<{ id: number; piece: string; start: number; end: number }> = [];
    // Symbols with their UTF-16 range in `word`: bytes for byte-level, code points otherwise.
    const syms: string[] = [];
    const ss: number[] = [];
    const se: number[] = [];
    if (this.byteLevel) {
      const u = encodeUtf8WithMap(word);
      u.bytes.forEach((b, k) => {
        syms.push(byteChar(b));
        ss.push(u.byteToUtf16[k]!);
        se.push(u.charEndUtf16[k]!);
      });
    } else {
      let at = 0;
      for (const ch of word) {
        syms.push(ch);
        ss.push(at);
        at += ch.length;
        se.push(at);
      }
    }
    let k = 0;
    for (const p of this.bpe.encodeWord(syms)) {
      out.push({ id: this.vocab.get(p.piece) ?? this.unkId, piece: p.piece, start: ss[k]!, end: se[k + p.symbols - 1]! }); // k counts symbols
      k += p.symbols;
    }
    return out;
  }
}

export class HfJsonTokenizer implements Tokenizer {
  readonly kind = 'tokenizer.json' as const;
  private readonly added: Array<[string, number]>;

  constructor(
    readonly special: SpecialIds,
    private readonly pieces: string[],
    private readonly normalizer: Normalizer,
    private readonly preTokenizer: PreTokenizerInfo,
    private readonly model: WordModel,
    added: ReadonlyMap<string, number>,
  ) {
    this.added = [...added].filter(([c]) => c.length > 0).sort((a, b) => b[0].length - a[0].length);
  }

  get vocabSize(): number {
    return this.pieces.length;
  }

  idToPiece(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 ? this.pieces[id] : undefined;
  }

  encode(text: string): Token[] {
    const tokens: Token[] = [];
    for (const part of splitAdded(text, this.added)) {
      if (part.id !== undefined) {
        tokens.push({ id: part.id, text: text.slice(part.start, part.end), start: part.start, end: part.end, special: false });
        continue;
      }
      const normalized = this.normalizer(AlignedText.of(text.slice(part.start, part.end), part.start));
      for (const word of this.preTokenizer.run(normalized)) {
        enterStage(this.model.stage);
        for (const t of this.model.tokenize(word.text)) {
          const [start, end] = word.origRange(t.start, t.end);
          tokens.push({ id: t.id, text: t.piece, start, end, special: false });
        }
      }
    }
    return tokens;
  }
}
