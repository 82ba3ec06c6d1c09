// vocab.txt (+ tokenizer_config.json) → WordPieceTokenizer with BERT's options and special ids taken from the
// vocabulary (BERT's [CLS] is not DeBERTa's id 1).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../errors';
import { exists, isRecord, readFileOrThrow, readJsonOrThrow } from './files';
import { readSpecialInfo, resolveSpecials } from './specials';
import { WordPieceTokenizer } from './wordpiece-tokenizer';

// bert-base-multilingual's vocab.txt is under 1 MB; a file far beyond that is not a WordPiece vocabulary.
const MAX_VOCAB_BYTES = 64 * 1024 * 1024;

/** One token a line, id = line number, read as Python's readlines() (universal newlines) does. */
export function readVocabTxt(file: string): string[] {
  let size: number | undefined;
  try {
    size = fs.statSync(file).size;
  } catch {
    // readFileOrThrow reports it
  }
  if (size !== undefined && size > MAX_VOCAB_BYTES) {
    throw new LensError(
      `${file} is ${(size / 2 ** 20).toFixed(0)} MB, too large for a WordPiece vocabulary (limit 64 MB) — use the model's original vocab.txt.`,
      'corrupt',
    );
  }
  const lines = readFileOrThrow(file, 'vocab.txt')
    .toString('utf8')
    .split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new LensError(`${file} is empty — use the model's original vocab.txt.`, 'corrupt');
  return lines;
}

interface BertTokenizerConfig {
  lowercase: boolean;
  basic: boolean;
  chineseChars: boolean;
  stripAccents: boolean | null;
  neverSplit: string[];
}

function readBertConfig(dir: string): BertTokenizerConfig {
  const file = path.join(dir, 'tokenizer_config.json');
  const c: BertTokenizerConfig = { lowercase: true, basic: true, chineseChars: true, stripAccents: null, neverSplit: [] };
  if (!exists(file)) return c;
  const json = readJsonOrThrow(file, 'tokenizer_config.json');
  if (!isRecord(json)) throw new LensError(`${file} must hold a JSON object — replace it with the model's original file.`, 'corrupt');
  if (typeof json.tokenizer_class === 'string' && /Japanese/i.test(json.tokenizer_class)) {
    throw new LensError(
      `${file}: ${json.tokenizer_class} splits words with a Japanese morphological analyser, which DeBERTa Lens does not have — pick a model with a BertTokenizer or a tokenizer.json.`,
      'unsupported',
    );
  }
  // An absent key takes BertTokenizer's default; a key written as null passes Python's None to it, which its
  // `if self.do_lower_case:` tests read as false (checked against BertTokenizer: special_literals.json).
  const flag = (key: string, dflt: boolean): boolean => {
    const v = json[key];
    if (v === undefined) return dflt;
    if (v === null) return false;
    if (typeof v !== 'boolean')
      throw new LensError(`${file}: ${key} must be true or false, got ${JSON.stringify(v)} — fix tokenizer_config.json.`, 'invalid-input');
    return v;
  };
  c.lowercase = flag('do_lower_case', true);
  c.basic = flag('do_basic_tokenize', true);
  c.chineseChars = flag('tokenize_chinese_chars', true);
  c.stripAccents = json.strip_accents === undefined || json.strip_accents === null ? null : flag('strip_accents', false);
  const ns = json.never_split;
  if (ns !== undefined && ns !== null) {
    if (!Array.isArray(ns) || !ns.every((s) => typeof s === 'string')) {
      throw new LensError(
        `${file}: never_split must be a list of strings, got ${JSON.stringify(ns)} — fix tokenizer_config.json.`,
        'invalid-input',
      );
    }
    c.neverSplit = ns;
  }
  return c;
}

export function loadWordPieceTokenizer(dir: string): WordPieceTokenizer {
  const file = path.join(dir, 'vocab.txt');
  const pieces = readVocabTxt(file);
  const vocab = new Map<string, number>();
  pieces.forEach((p, id) => vocab.set(p, id));
  const cfg = readBertConfig(dir);
  const info = readSpecialInfo(dir);
  const special = resolveSpecials(info, (p) => vocab.get(p), {}, file);
  // transformers adds every special token to the added tokens, with its vocabulary id.
  const specialNames = [...Object.values(info.names), ...info.additional];
  const added = new Map(info.added);
  for (const name of specialNames) {
    const id = added.get(name) ?? vocab.get(name);
    if (id !== undefined) added.set(name, id);
  }
  for (const [c, id] of added) if (pieces[id] === undefined) pieces[id] = c;
  for (let id = 0; id < pieces.length; id++) pieces[id] ??= '';
  const keepCase = [...specialNames, ...[...info.added.keys()].filter((c) => !info.unnormalized.has(c))];
  return new WordPieceTokenizer({
    pieces,
    vocab,
    special,
    added,
    keepCase,
    basic: cfg.basic
      ? {
          lowercase: cfg.lowercase,
          stripAccents: cfg.stripAccents,
          chineseChars: cfg.chineseChars,
          neverSplit: new Set([...cfg.neverSplit, ...specialNames]),
        }
      : undefined,
    neverSplit: new Set(cfg.neverSplit),
  });
}
