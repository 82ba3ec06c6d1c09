// vocab.json + merges.txt (DeBERTa v1, GPT-2 byte-level BPE with DeBERTa's remapped ids) → tokenizer.
import * as path from 'node:path';
import { LensError } from '../errors';
import { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
import { exists, isRecord, readFileOrThrow, readJsonOrThrow, tokenId } from './files';
import { readSpecialInfo, resolveSpecials } from './specials';

export function readVocabJson(file: string): Map<string, number> {
  const json = readJsonOrThrow(file, 'vocab.json');
  if (!isRecord(json)) throw new LensError(`${file} must map pieces to ids — replace it with the model's original vocab.json.`, 'corrupt');
  const vocab = new Map<string, number>();
  for (const [piece, id] of Object.entries(json)) vocab.set(piece, tokenId(id, file, `piece ${JSON.stringify(piece)}`));
  return vocab;
}

export function readMergesTxt(file: string): Array<[string, string]> {
  const lines = readFileOrThrow(file, 'merges.txt').toString('utf8').split(/\r?\n/);
  const merges: Array<[string, string]> = [];
  lines.forEach((line, i) => {
    if (line.length === 0 || (i === 0 && line.startsWith('#version'))) return;
    const parts = line.split(' ');
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      throw new LensError(`${file} line ${i + 1} is not "left right" — replace it with the model's original merges.txt.`, 'corrupt');
    }
    merges.push([parts[0], parts[1]]);
  });
  return merges;
}

export function loadBpeTokenizer(dir: string): ByteLevelBpeTokenizer {
  const vocabFile = path.join(dir, 'vocab.json');
  const mergesFile = path.join(dir, 'merges.txt');
  const vocab = readVocabJson(vocabFile);
  const merges = readMergesTxt(mergesFile);
  const info = readSpecialInfo(dir);
  const special = resolveSpecials(info, (p) => vocab.get(p), {}, vocabFile);
  let addPrefixSpace = false;
  const cfgFile = path.join(dir, 'tokenizer_config.json');
  if (exists(cfgFile)) {
    const cfg = readJsonOrThrow(cfgFile, 'tokenizer_config.json');
    if (isRecord(cfg) && typeof cfg.add_prefix_space === 'boolean') addPrefixSpace = cfg.add_prefix_space;
  }
  // Like Hugging Face's DebertaTokenizer, special-token text in the input is matched as that token.
  const addedTokens = new Map(info.added);
  for (const role of ['pad', 'cls', 'sep', 'unk', 'mask'] as const)
    if (special[role] >= 0) addedTokens.set(info.names[role], special[role]);
  return new ByteLevelBpeTokenizer({ kind: 'bpe', vocab, merges, special, addPrefixSpace, useRegex: true, addedTokens });
}
