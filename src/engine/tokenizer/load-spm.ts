// spm.model → SpmTokenizer, with DeBERTa's special ids.
import * as path from 'node:path';
import { LensError } from '../errors';
import { readFileOrThrow } from './files';
import { type SpmModelProto, parseSpmModel } from './spm-model';
import { SpmTokenizer } from './spm-tokenizer';
import { readSpecialInfo, resolveSpecials } from './specials';

export function loadSpmTokenizer(dir: string): SpmTokenizer {
  const file = path.join(dir, 'spm.model');
  const buf = readFileOrThrow(file, 'SentencePiece model');
  let proto: SpmModelProto;
  try {
    proto = parseSpmModel(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
  } catch (e) {
    throw new LensError(`${file} is not a valid SentencePiece model (${(e as Error).message}) — re-download spm.model.`, 'corrupt');
  }
  if (proto.pieces.length === 0) {
    throw new LensError(`${file} holds no vocabulary pieces — re-download spm.model.`, 'corrupt');
  }
  const ids = new Map<string, number>();
  proto.pieces.forEach((p, i) => {
    if (!ids.has(p.piece)) ids.set(p.piece, i);
  });
  const info = readSpecialInfo(dir);
  const n = proto.pieces.length;
  const t = proto.trainer;
  const inRange = (i: number) => (i >= 0 && i < n ? i : undefined);
  // DeBERTa-v2/v3 append [MASK] after the SentencePiece pieces.
  const special = resolveSpecials(
    info,
    (p) => ids.get(p),
    {
      unk: inRange(t.unkId),
      cls: inRange(t.bosId),
      sep: inRange(t.eosId),
      pad: inRange(t.padId),
      mask: n,
    },
    file,
  );
  const extra = new Map<number, string>();
  for (const [content, id] of info.added) if (id >= n) extra.set(id, content);
  if (special.mask >= n && !extra.has(special.mask)) extra.set(special.mask, info.names.mask);
  try {
    return new SpmTokenizer(proto, special, extra);
  } catch (e) {
    throw new LensError(`${file}: ${(e as Error).message} — DeBERTa Lens reads Unigram SentencePiece models only.`, 'unsupported');
  }
}
