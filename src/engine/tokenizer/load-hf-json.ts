// tokenizer.json → HfJsonTokenizer. Reads what the file says; kinds DeBERTa and BERT do not use are refused clearly.
import * as path from 'node:path';
import { LensError } from '../errors';
import { isRecord, readJsonOrThrow, tokenId } from './files';
import { buildNormalizer, buildPreTokenizer } from './hf-pipeline';
import { BpeWordModel, HfJsonTokenizer, UnigramWordModel, type WordModel } from './hf-json-tokenizer';
import { readSpecialInfo, resolveSpecials } from './specials';
import { UnigramKind, UnigramModel, type UnigramPiece } from './unigram';
import { encodeUtf8 } from './utf8';
import { WordPieceModel } from './wordpiece';

export function loadHfJsonTokenizer(dir: string): HfJsonTokenizer {
  const file = path.join(dir, 'tokenizer.json');
  const json = readJsonOrThrow(file, 'tokenizer.json');
  const bad = (why: string, code: 'corrupt' | 'unsupported' = 'corrupt') =>
    new LensError(`${file}: ${why} — use the tokenizer.json that came with the model.`, code);
  if (!isRecord(json) || !isRecord(json.model)) throw bad('no "model" object');
  const m = json.model;

  // Added tokens (specials included) are matched in the raw text before anything else, as Hugging Face does.
  const added = new Map<string, number>();
  if (Array.isArray(json.added_tokens)) {
    for (const t of json.added_tokens) {
      if (isRecord(t) && typeof t.content === 'string')
        added.set(t.content, tokenId(t.id, file, `added token ${JSON.stringify(t.content)}`));
    }
  }

  const info = readSpecialInfo(dir);
  const pieces: string[] = [];
  const ids = new Map<string, number>();
  let model: WordModel;
  let unkId: number | undefined;
  const type = m.type ?? (Array.isArray(m.vocab) ? 'Unigram' : 'BPE');
  let preTok;
  let normalizer;
  try {
    normalizer = buildNormalizer(json.normalizer);
    preTok = buildPreTokenizer(json.pre_tokenizer);
  } catch (e) {
    throw bad((e as Error).message, 'unsupported');
  }
  if (type === 'Unigram') {
    if (!Array.isArray(m.vocab)) throw bad('Unigram model has no "vocab" list');
    const up: UnigramPiece[] = [];
    m.vocab.forEach((entry: unknown, id: number) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') {
        throw bad(`Unigram vocab entry ${id} is not [piece, score]`);
      }
      pieces.push(entry[0]);
      if (!ids.has(entry[0])) ids.set(entry[0], id);
      up.push({ bytes: encodeUtf8(entry[0]), id, score: entry[1], kind: UnigramKind.NORMAL });
    });
    if (m.unk_id === undefined || m.unk_id === null) throw bad('Unigram model has no unk_id', 'unsupported');
    unkId = tokenId(m.unk_id, file, 'the Unigram unk_id');
    if (unkId >= pieces.length) throw bad(`the Unigram unk_id ${unkId} is past the end of the vocabulary (${pieces.length} pieces)`);
    let byteIds: Map<number, number> | undefined;
    if (m.byte_fallback === true) {
      byteIds = new Map();
      pieces.forEach((p, id) => {
        const b = /^<0x([0-9A-F]{2})>$/.exec(p);
        if (b?.[1]) byteIds!.set(parseInt(b[1], 16), id);
      });
    }
    model = new UnigramWordModel(new UnigramModel(up, pieces.length, { unkId, float32: false }), pieces, byteIds);
  } else if (type === 'BPE') {
    if (!isRecord(m.vocab)) throw bad('BPE model has no "vocab" object');
    for (const [p, id] of Object.entries(m.vocab)) {
      ids.set(p, tokenId(id, file, `BPE piece ${JSON.stringify(p)}`));
      pieces[id as number] = p;
    }
    const merges: Array<[string, string]> = [];
    for (const mg of (Array.isArray(m.merges) ? m.merges : []) as unknown[]) {
      const pair = typeof mg === 'string' ? mg.split(' ') : mg;
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        throw bad(`BPE merge ${JSON.stringify(mg)} is not a pair`);
      }
      merges.push([pair[0], pair[1]]);
    }
    if (m.continuing_subword_prefix || m.end_of_word_suffix)
      throw bad('BPE with subword prefixes/suffixes is not supported', 'unsupported');
    unkId = ids.get(typeof m.unk_token === 'string' ? m.unk_token : info.names.unk) ?? added.get(info.names.unk);
    if (unkId === undefined) throw bad('BPE model has no unknown token (unk_token)', 'unsupported');
    model = new BpeWordModel(merges, ids, unkId, preTok.byteLevel);
  } else if (type === 'WordPiece') {
    if (!isRecord(m.vocab)) throw bad('WordPiece model has no "vocab" object');
    for (const [p, id] of Object.entries(m.vocab)) {
      ids.set(p, tokenId(id, file, `WordPiece piece ${JSON.stringify(p)}`));
      pieces[id as number] = p;
    }
    const unkPiece = typeof m.unk_token === 'string' ? m.unk_token : info.names.unk;
    unkId = ids.get(unkPiece) ?? added.get(unkPiece);
    if (unkId === undefined) throw bad(`WordPiece model has no unknown token ${JSON.stringify(unkPiece)} in its vocabulary`);
    const maxChars = m.max_input_chars_per_word ?? 100;
    if (!Number.isInteger(maxChars)) throw bad('max_input_chars_per_word is not an integer');
    model = new WordPieceModel({
      vocab: ids,
      unkId,
      unkPiece,
      prefix: typeof m.continuing_subword_prefix === 'string' ? m.continuing_subword_prefix : '##',
      maxChars: maxChars as number,
    });
  } else {
    throw bad(`model type ${JSON.stringify(type)} is not supported (DeBERTa uses Unigram or BPE, BERT WordPiece)`, 'unsupported');
  }

  for (const [c, id] of added) info.added.set(c, id);
  const special = resolveSpecials(info, (p) => ids.get(p), { unk: unkId, mask: type === 'Unigram' ? pieces.length : undefined }, file);
  for (const [c, id] of added) if (pieces[id] === undefined) pieces[id] = c;
  if (pieces[special.mask] === undefined) pieces[special.mask] = info.names.mask;
  return new HfJsonTokenizer(special, pieces, normalizer, preTok, model, added);
}
