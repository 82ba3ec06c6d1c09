// GPT-2 style byte-level BPE (DeBERTa v1): regex pre-tokens → UTF-8 bytes → mapped characters → merges.
// Offsets come from the bytes each piece covers; a piece holding part of a multi-byte character gets the
// whole character's range.
import type { Token, TokenizerKind } from '../types';
import { BpeModel } from './bpe';
import { byteChar, splitGpt2 } from './byte-level';
import { enterStage, stageId } from './stages';
import type { SpecialIds, Tokenizer } from './types';
import { encodeUtf8WithMap } from './utf8';

export interface ByteLevelBpeOptions {
  kind: TokenizerKind;
  vocab: ReadonlyMap<string, number>;
  merges: ReadonlyArray<readonly [string, string]>;
  special: SpecialIds;
  addPrefixSpace: boolean;
  /** Whether to split with GPT-2's regex first (ByteLevel use_regex); otherwise the text is one word. */
  useRegex: boolean;
  /** Exact strings matched before pre-tokenization (added tokens), longest first. */
  addedTokens?: ReadonlyMap<string, number>;
}

const SPLIT_STAGE = stageId('GPT-2 pre-tokenizer');
const MERGE_STAGE = stageId('BPE merges (merges.txt)');
const ADDED_STAGE = stageId('added tokens');

export class ByteLevelBpeTokenizer implements Tokenizer {
  readonly kind: TokenizerKind;
  readonly special: SpecialIds;
  readonly vocabSize: number;
  private readonly bpe: BpeModel;
  private readonly pieces: string[] = [];
  private readonly added: Array<[string, number]>;

  constructor(private readonly opts: ByteLevelBpeOptions) {
    this.kind = opts.kind;
    this.special = opts.special;
    this.bpe = new BpeModel(opts.merges);
    for (const [p, id] of opts.vocab) this.pieces[id] = p;
    for (const [p, id] of opts.addedTokens ?? []) if (this.pieces[id] === undefined) this.pieces[id] = p;
    this.vocabSize = this.pieces.length;
    this.added = [...(opts.addedTokens ?? [])].filter(([c]) => c.length > 0).sort((a, b) => b[0].length - a[0].length);
  }

  idToPiece(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 ? this.pieces[id] : undefined;
  }

  encode(text: string): Token[] {
    const tokens: Token[] = [];
    for (const part of splitAdded(text, this.added)) {
      if (part.id !== undefined)
        tokens.push({ id: part.id, text: text.slice(part.start, part.end), start: part.start, end: part.end, special: false });
      else this.encodePlain(text, part.start, part.end, tokens);
    }
    return tokens;
  }

  private encodePlain(text: string, from: number, to: number, out: Token[]): void {
    let s = text.slice(from, to);
    // A prefix space is virtual: it has no source position, so it shares position `from`.
    let shift = from;
    if (this.opts.addPrefixSpace && from === 0 && !s.startsWith(' ')) {
      s = ' ' + s;
      shift -= 1;
    }
    enterStage(SPLIT_STAGE);
    const ranges: Array<[number, number]> = this.opts.useRegex ? splitGpt2(s) : s.length ? [[0, s.length]] : [];
    enterStage(MERGE_STAGE);
    for (const [ws, we] of ranges) {
      const u = encodeUtf8WithMap(s.slice(ws, we));
      const symbols = Array.from(u.bytes, byteChar);
      let b = 0;
      for (const p of this.bpe.encodeWord(symbols)) {
        const start = Math.max(from, ws + u.byteToUtf16[b]! + shift);
        const end = Math.max(from, ws + u.charEndUtf16[b + p.symbols - 1]! + shift);
        const id = this.opts.vocab.get(p.piece) ?? this.special.unk;
        out.push({ id, text: p.piece, start, end, special: false });
        b += p.symbols;
      }
    }
  }
}

export interface TextPart {
  start: number;
  end: number;
  id?: number;
}

/** Splits text around exact occurrences of added tokens (leftmost, then longest). */
export function splitAdded(text: string, added: ReadonlyArray<[string, number]>): TextPart[] {
  if (added.length === 0) return [{ start: 0, end: text.length }];
  enterStage(ADDED_STAGE);
  const parts: TextPart[] = [];
  let plainStart = 0;
  let i = 0;
  const firsts = new Set(added.map(([c]) => c.charCodeAt(0)));
  while (i < text.length) {
    const hit = firsts.has(text.charCodeAt(i)) ? added.find(([c]) => text.startsWith(c, i)) : undefined;
    if (hit) {
      if (i > plainStart) parts.push({ start: plainStart, end: i });
      parts.push({ start: i, end: i + hit[0].length, id: hit[1] });
      i += hit[0].length;
      plainStart = i;
    } else i++;
  }
  if (text.length > plainStart) parts.push({ start: plainStart, end: text.length });
  return parts;
}
