// A SentencePiece model of mDeBERTa-v3's size (250,104 pieces; [MASK] comes after them, 250,105 ids in all) for the
// benchmarks, written at bench time: the bundled model's spm.model (so English text tokenizes as it does there, with
// the same specials and normalizer) with two-character CJK pieces appended. A ModelProto's repeated `pieces` field
// may recur after the trainer and normalizer specs; readers concatenate every occurrence in order.
import * as fs from 'node:fs';
import { ProtoWriter } from '../../src/engine/graph/protobuf-writer';
import { parseSpmModel } from '../../src/engine/tokenizer/spm-model';

/** mDeBERTa-v3-base's spm.model: 250,104 pieces (the tokenizer adds [MASK] as id 250,104). */
export const MDEBERTA_PIECES = 250_104;

const NORMAL = 1;
const CJK = 0x4e00;

/** Writes `out`: `source`'s pieces, then synthetic ones up to `total`, with scores below every real piece's. */
export function writeSyntheticSpm(source: string, out: string, total = MDEBERTA_PIECES): { pieces: number; bytes: number } {
  const bytes = fs.readFileSync(source);
  const model = parseSpmModel(bytes);
  const have = new Set(model.pieces.map((p) => p.piece));
  const lowest = Math.min(...model.pieces.map((p) => p.score));
  const extra = new ProtoWriter();
  let added = 0;
  for (let k = 0; model.pieces.length + added < total; k++) {
    // First character from a run of 1,300 ideographs, second from 200 others: unique pairs, none an English word.
    const piece = String.fromCodePoint(CJK + Math.floor(k / 200), CJK + 0x2000 + (k % 200));
    if (have.has(piece)) continue;
    extra.message(
      1,
      new ProtoWriter()
        .string(1, piece)
        .float(2, lowest - 1 - k * 1e-6)
        .int(3, NORMAL),
    );
    added++;
  }
  const tail = extra.finish();
  fs.writeFileSync(out, Buffer.concat([bytes, tail]));
  return { pieces: model.pieces.length + added, bytes: bytes.length + tail.length };
}
