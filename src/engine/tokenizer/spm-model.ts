// SentencePiece's ModelProto (sentencepiece_model.proto), read with the tiny protobuf reader. Only the fields
// that change how text is encoded are kept.
import { ProtoError, asBool, asBytes, asFloat, asInt, asString, readMessage } from './protobuf';

export const enum PieceType {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}
export const enum SpmModelType {
  UNIGRAM = 1,
  BPE = 2,
  WORD = 3,
  CHAR = 4,
}

export interface SpmPiece {
  piece: string;
  score: number;
  type: PieceType;
}

export interface SpmTrainerSpec {
  modelType: SpmModelType;
  byteFallback: boolean;
  unkId: number;
  bosId: number;
  eosId: number;
  padId: number;
  treatWhitespaceAsSuffix: boolean;
  splitDigits: boolean;
}

export interface SpmNormalizerSpec {
  name: string;
  precompiledCharsmap: Uint8Array;
  addDummyPrefix: boolean;
  removeExtraWhitespaces: boolean;
  escapeWhitespaces: boolean;
}

export interface SpmModelProto {
  pieces: SpmPiece[];
  trainer: SpmTrainerSpec;
  normalizer: SpmNormalizerSpec;
}

/** Parses a serialized ModelProto; throws ProtoError when the bytes are not one. */
export function parseSpmModel(buf: Uint8Array): SpmModelProto {
  const pieces: SpmPiece[] = [];
  // Defaults as declared in sentencepiece_model.proto.
  const trainer: SpmTrainerSpec = {
    modelType: SpmModelType.UNIGRAM,
    byteFallback: false,
    unkId: 0,
    bosId: 1,
    eosId: 2,
    padId: -1,
    treatWhitespaceAsSuffix: false,
    splitDigits: false,
  };
  const normalizer: SpmNormalizerSpec = {
    name: '',
    precompiledCharsmap: new Uint8Array(0),
    addDummyPrefix: true,
    removeExtraWhitespaces: true,
    escapeWhitespaces: true,
  };
  let seen = 0;
  readMessage(buf, (field, v) => {
    if (field === 2 || field === 3) seen |= 1 << field;
    if (field === 1) {
      const p: SpmPiece = { piece: '', score: 0, type: PieceType.NORMAL };
      readMessage(asBytes(v), (f, pv) => {
        if (f === 1) p.piece = asString(pv);
        else if (f === 2) p.score = asFloat(pv);
        else if (f === 3) p.type = asInt(pv);
      });
      pieces.push(p);
    } else if (field === 2) {
      readMessage(asBytes(v), (f, tv) => {
        switch (f) {
          case 3:
            trainer.modelType = asInt(tv);
            break;
          case 24:
            trainer.treatWhitespaceAsSuffix = asBool(tv);
            break;
          case 25:
            trainer.splitDigits = asBool(tv);
            break;
          case 35:
            trainer.byteFallback = asBool(tv);
            break;
          case 40:
            trainer.unkId = asInt(tv);
            break;
          case 41:
            trainer.bosId = asInt(tv);
            break;
          case 42:
            trainer.eosId = asInt(tv);
            break;
          case 43:
            trainer.padId = asInt(tv);
            break;
        }
      });
    } else if (field === 3) {
      readMessage(asBytes(v), (f, nv) => {
        switch (f) {
          case 1:
            normalizer.name = asString(nv);
            break;
          case 2:
            normalizer.precompiledCharsmap = asBytes(nv);
            break;
          case 3:
            normalizer.addDummyPrefix = asBool(nv);
            break;
          case 4:
            normalizer.removeExtraWhitespaces = asBool(nv);
            break;
          case 5:
            normalizer.escapeWhitespaces = asBool(nv);
            break;
        }
      });
    }
  });
  // Writers emit pieces (1), then trainer_spec (2), then normalizer_spec (3): a file cut short on a field
  // boundary parses, but without the specs it would tokenize with the wrong defaults.
  if (seen !== 0b1100) throw new ProtoError('trainer_spec or normalizer_spec missing; the file looks truncated');
  return { pieces, trainer, normalizer };
}
