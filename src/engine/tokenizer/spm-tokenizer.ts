// A Tokenizer over a SentencePiece Unigram model: normalize (with alignment), Viterbi, then the library's
// PopulateSentencePieceText rules for pieces and begin/end (merged UNK runs, byte fallback).
import { at, last as lastOf } from '../../shared/checked';
import type { Token } from '../types';
import { PieceType, type SpmModelProto, SpmModelType } from './spm-model';
import { SpmNormalizer } from './spm-normalizer';
import { enterStage, stageId } from './stages';
import type { SpecialIds, Tokenizer } from './types';

const NORMALIZER_STAGE = stageId('SentencePiece normalizer');
const MODEL_STAGE = stageId('SentencePiece Unigram model');
import { UnigramKind, UnigramModel, type UnigramPiece } from './unigram';
import { byteEndToUtf16, byteStartToUtf16 } from './offsets';
import { decodeUtf8, encodeUtf8, encodeUtf8WithMap } from './utf8';

export class SpmTokenizer implements Tokenizer {
  readonly kind = 'spm' as const;
  readonly vocabSize: number;
  private readonly normalizer: SpmNormalizer;
  private readonly model: UnigramModel;
  private readonly pieces: string[];
  private readonly byteIds: Int32Array | undefined;

  /** `extra` adds ids past the model's own pieces (DeBERTa's [MASK]). Throws Error on unsupported models. */
  constructor(
    proto: SpmModelProto,
    readonly special: SpecialIds,
    extra: ReadonlyMap<number, string> = new Map(),
  ) {
    if (proto.trainer.modelType !== SpmModelType.UNIGRAM) {
      throw new Error(`SentencePiece model type ${proto.trainer.modelType} is not Unigram`);
    }
    this.pieces = proto.pieces.map((p) => p.piece);
    for (const [id, piece] of extra) if (id >= this.pieces.length) this.pieces[id] = piece;
    this.vocabSize = this.pieces.length;
    const unigramPieces: UnigramPiece[] = [];
    let unkId = -1;
    proto.pieces.forEach((p, id) => {
      if (p.type === PieceType.UNKNOWN) unkId = id;
      const kind =
        p.type === PieceType.NORMAL
          ? UnigramKind.NORMAL
          : p.type === PieceType.USER_DEFINED
            ? UnigramKind.USER_DEFINED
            : p.type === PieceType.UNUSED
              ? UnigramKind.UNUSED
              : undefined;
      if (kind !== undefined) unigramPieces.push({ bytes: encodeUtf8(p.piece), id, score: p.score, kind });
    });
    if (unkId < 0) throw new Error('SentencePiece model has no UNKNOWN piece');
    this.model = new UnigramModel(unigramPieces, proto.pieces.length, { unkId, float32: true });
    const matcher = this.model.hasUserDefined()
      ? (b: Uint8Array, pos: number, end: number) => this.model.userDefinedPrefix(b, pos, end)
      : undefined;
    this.normalizer = new SpmNormalizer(proto.normalizer, proto.trainer.treatWhitespaceAsSuffix, matcher);
    if (proto.trainer.byteFallback) {
      this.byteIds = new Int32Array(256).fill(unkId);
      proto.pieces.forEach((p, id) => {
        const m = p.type === PieceType.BYTE ? /^<0x([0-9A-F]{2})>$/.exec(p.piece) : null;
        if (m?.[1]) this.byteIds![parseInt(m[1], 16)] = id;
      });
    }
  }

  idToPiece(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 && id < this.pieces.length ? this.pieces[id] : undefined;
  }

  encode(text: string): Token[] {
    const orig = encodeUtf8WithMap(text);
    enterStage(NORMALIZER_STAGE);
    const norm = this.normalizer.normalize(orig.bytes);
    enterStage(MODEL_STAGE);
    const segments = this.model.encode(norm.bytes);
    const n2o = norm.normToOrig;
    const tokens: Token[] = [];
    let prevUnk = false;
    for (const seg of segments) {
      // Segments lie within the normalized bytes; normToOrig has an entry for each offset 0…length.
      const ob = n2o[seg.start]!;
      const oe = n2o[seg.end]!;
      const start = byteStartToUtf16(orig, ob);
      const end = byteEndToUtf16(orig, oe);
      const piece = decodeUtf8(norm.bytes.subarray(seg.start, seg.end));
      if (seg.unk && this.byteIds) {
        // Byte fallback: one piece per byte; only the last one carries the character's surface.
        for (let k = seg.start; k < seg.end; k++) {
          const id = this.byteIds[norm.bytes[k]!]!; // 256 entries, one per byte
          const last = k === seg.end - 1;
          tokens.push({ id, text: at(this.pieces, id, 'byte piece id'), start, end: last ? end : start, special: false });
        }
      } else if (seg.unk && prevUnk) {
        // The library merges a run of unknown pieces into one.
        const t = lastOf(tokens, 'the tokens so far');
        t.text += piece;
        t.end = end;
      } else {
        tokens.push({ id: seg.id, text: piece, start, end, special: false });
      }
      prevUnk = seg.unk;
    }
    return tokens;
  }
}
