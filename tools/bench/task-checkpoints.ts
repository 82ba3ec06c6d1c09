// Random-weight sequence classifiers for `npm run bench:task`, written at bench time (never committed): v3-base's
// geometry with the bundled model's tokenizer, and Prompt-Guard's shape (mDeBERTa-v3-base: v3-base's encoder,
// a 251,000-row embedding, a 250,105-id SentencePiece model) with its three labels.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';
import { writeSyntheticSpm } from './synthetic-spm';

export const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');

/** Prompt-Guard-86M's labels and mDeBERTa-v3-base's config.json vocab_size. */
export const LABELS = ['BENIGN', 'INJECTION', 'JAILBREAK'];
export const MDEBERTA_VOCAB = 251_000;

const TOKENIZER_FILES = ['tokenizer_config.json', 'special_tokens_map.json'];

/** DebertaV2ForSequenceClassification as save_pretrained stores it: the encoder under `deberta.`, the pooler and the
 *  classifier at the top level, the labels in config.json. */
function writeClassifier(dir: string, vocab: number | undefined): void {
  const g = V3_GEOMETRIES['v3-base']!;
  const D = g.hidden;
  writeV3Checkpoint(dir, g, false, {
    vocab,
    tensors: (rand) => [
      rand('pooler.dense.weight', [D, D]),
      rand('pooler.dense.bias', [D]),
      rand('classifier.weight', [LABELS.length, D]),
      rand('classifier.bias', [LABELS.length]),
    ],
    config: {
      architectures: ['DebertaV2ForSequenceClassification'],
      id2label: Object.fromEntries(LABELS.map((l, i) => [String(i), l])),
      label2id: Object.fromEntries(LABELS.map((l, i) => [l, i])),
      pooler_hidden_size: D,
      pooler_hidden_act: 'gelu',
      pooler_dropout: 0,
    },
  });
  for (const f of TOKENIZER_FILES) fs.copyFileSync(path.join(REPO, 'models', 'default', f), path.join(dir, f));
}

/** v3-base with a three-label classifier and the bundled 8,000-piece tokenizer. */
export function writeV3BaseClassifier(dir: string): void {
  writeClassifier(dir, undefined);
  fs.copyFileSync(path.join(REPO, 'models', 'default', 'spm.model'), path.join(dir, 'spm.model'));
}

/** Prompt-Guard's shape: the same encoder and classifier, mDeBERTa's vocabulary and a 250,104-piece spm.model. */
export function writeMdebertaClassifier(dir: string): { pieces: number; spm_bytes: number } {
  writeClassifier(dir, MDEBERTA_VOCAB);
  const spm = writeSyntheticSpm(path.join(REPO, 'models', 'default', 'spm.model'), path.join(dir, 'spm.model'));
  return { pieces: spm.pieces, spm_bytes: spm.bytes };
}
