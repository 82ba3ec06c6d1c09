// The models shipped with this installation and where they are: the default always (a missing one is reported
// when it opens), another bundled model only when its folder is installed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLED_MODELS } from '../../engine';
import type { BundledDir } from './select-model';

export interface InstalledModels {
  bundled: BundledDir[];
  /** The embedded default's folder (an empty model-path setting). */
  defaultDir: string;
  /** Bundled models by the name the model-path setting may hold → folder. */
  bundledDirs: Map<string, string>;
}

export function installedModels(extensionPath: string): InstalledModels {
  const bundled = BUNDLED_MODELS.map((model) => ({ model, dir: path.join(extensionPath, 'models', model.folder) })).filter(
    (b, k) => k === 0 || fs.existsSync(path.join(b.dir, 'config.json')),
  );
  const first = bundled[0];
  if (!first) throw new Error('DeBERTa Lens lists no bundled model');
  return { bundled, defaultDir: first.dir, bundledDirs: new Map(bundled.map((b) => [b.model.name, b.dir])) };
}
