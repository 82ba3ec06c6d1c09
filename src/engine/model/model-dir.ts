// Where a model named on the command line or in the settings lives: a bundled model's name or a folder. Used by
// model/ and the CLI only; the verbs in run/ see an open model, never a path to resolve.
import * as path from 'node:path';
import { LensError } from '../errors';
import { BUNDLED_MODELS, bundledModel, findBundledDir } from './bundled-models';

export const DEFAULT_MODEL = 'default';

/** A bundled model's name (`default`, `bert-twin`) → its folder in models/ (beside the bundle or the sources); else an absolute path. */
export function resolveModelDir(arg: string): string {
  const bundled = bundledModel(arg);
  if (!bundled) return path.resolve(arg);
  const dir = findBundledDir(bundled, __dirname);
  if (!dir)
    throw new LensError(
      `the bundled model ${arg} (models/${bundled.folder}) is missing from this installation: reinstall DeBERTa Lens or pass --model DIR`,
      'not-found',
    );
  return dir;
}

/** Which bundled model a folder is, or null. */
export function bundledName(dir: string): string | null {
  return BUNDLED_MODELS.find((m) => findBundledDir(m, __dirname) === dir)?.name ?? null;
}
