// loadTokenizer: picks spm.model, else vocab.txt (BERT's WordPiece), else tokenizer.json, else vocab.json + merges.txt.
// The files the Python tokenizer reads come before tokenizer.json, which Hugging Face converts from them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../errors';
import { exists } from './files';
import { loadBpeTokenizer } from './load-bpe';
import { loadHfJsonTokenizer } from './load-hf-json';
import { loadSpmTokenizer } from './load-spm';
import { loadWordPieceTokenizer } from './load-word-piece';
import type { Architecture } from '../types';
import type { Tokenizer } from './types';

export type { SpecialIds, Tokenizer } from './types';
export { buildModelInput } from './model-input';
export type { ModelInput } from './types';

export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    throw new LensError(`Model folder not found: ${dir} — check the model path.`, 'not-found');
  }
  if (!stat.isDirectory())
    throw new LensError(`Model path ${dir} is not a folder — point it at the folder that holds the tokenizer files.`, 'invalid-input');
  if (exists(path.join(dir, 'spm.model'))) return loadSpmTokenizer(dir);
  if (exists(path.join(dir, 'vocab.txt'))) return loadWordPieceTokenizer(dir);
  if (exists(path.join(dir, 'tokenizer.json'))) return loadHfJsonTokenizer(dir);
  const hasVocab = exists(path.join(dir, 'vocab.json'));
  const hasMerges = exists(path.join(dir, 'merges.txt'));
  if (hasVocab && hasMerges) return loadBpeTokenizer(dir);
  if (hasVocab !== hasMerges) {
    const missing = path.join(dir, hasVocab ? 'merges.txt' : 'vocab.json');
    throw new LensError(`${missing} not found: a BPE tokenizer needs both vocab.json and merges.txt.`, 'invalid-input');
  }
  throw new LensError(`No tokenizer in ${dir}: expected spm.model, vocab.txt, tokenizer.json, or vocab.json + merges.txt.`, 'not-found');
}

/** What to say when text must be tokenized and the model folder has no tokenizer files. */
export function missingTokenizerError(dir: string, architecture: Architecture): LensError {
  const files =
    architecture === 'bert'
      ? 'BERT reads vocab.txt (with tokenizer_config.json) or tokenizer.json'
      : 'DeBERTa reads spm.model, tokenizer.json, or vocab.json + merges.txt';
  return new LensError(`${dir} has no tokenizer: ${files} — copy them from the model's original files, or pass ids.`, 'not-found');
}
