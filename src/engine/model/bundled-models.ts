// The models shipped with the extension and the CLI, by the names `--model` and the model-path setting accept.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface BundledModel {
  /** What `--model` and `debertaLens.modelPath` accept ('' in the setting also means `default`). */
  name: string;
  /** Folder under models/. */
  folder: string;
  label: string;
  description: string;
}

export const BUNDLED_MODELS: readonly BundledModel[] = [
  { name: 'default', folder: 'default', label: 'Default model', description: 'DeBERTa-v3, 4 × 256, bundled' },
  {
    name: 'bert-twin',
    folder: 'bert-twin',
    label: 'BERT twin of the default model',
    description: 'BERT, same size, data and training, bundled: for Compare',
  },
  {
    name: 'default-pairs',
    folder: 'default-pairs',
    label: 'Sentence-pair classifier (does B continue A?)',
    description: 'the default model fine-tuned on sentence pairs, bundled: a task head to explain',
  },
  {
    name: 'bert-twin-pairs',
    folder: 'bert-twin-pairs',
    label: 'BERT twin sentence-pair classifier',
    description: 'the BERT twin fine-tuned the same way, bundled: for Compare',
  },
];

export function bundledModel(name: string): BundledModel | undefined {
  return BUNDLED_MODELS.find((m) => m.name === name);
}

/** The bundled model's folder found above `from` (beside the bundle or the sources), or undefined. */
export function findBundledDir(m: BundledModel, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'models', m.folder);
    if (fs.existsSync(path.join(candidate, 'config.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
