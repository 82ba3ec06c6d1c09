// Which files of a checkpoint folder hold the weights, and what to call the checkpoint.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLensError, LensError } from '../errors';
import { readJsonFile } from './json-file';
import { MAX_SMALL_JSON_BYTES, readRegularFile } from './regular-file';

export type WeightFormat = 'safetensors' | 'torch';

export interface WeightLayout {
  format: WeightFormat;
  /** Absolute paths, in reading order. */
  files: string[];
  /** For sharded checkpoints: tensor name → absolute shard path (from the index's weight_map). */
  weightMap?: Map<string, string>;
}

// Preference order: safetensors (no pickle, zero-copy) before PyTorch pickles; single files before shards.
const CANDIDATES: { file: string; format: WeightFormat; index: boolean }[] = [
  { file: 'model.safetensors', format: 'safetensors', index: false },
  { file: 'model.safetensors.index.json', format: 'safetensors', index: true },
  { file: 'pytorch_model.bin', format: 'torch', index: false },
  { file: 'pytorch_model.bin.index.json', format: 'torch', index: true },
];

export function findWeights(dir: string): WeightLayout {
  for (const c of CANDIDATES) {
    const p = path.join(dir, c.file);
    if (!fs.existsSync(p)) continue;
    return c.index ? readIndex(dir, p, c.format) : { format: c.format, files: [p] };
  }
  throw new LensError(
    `${dir}: no weights found; expected one of ${CANDIDATES.map((c) => c.file).join(', ')} in the model folder.`,
    'not-found',
  );
}

function readIndex(dir: string, indexFile: string, format: WeightFormat): WeightLayout {
  let json: unknown;
  try {
    json = readJsonFile(indexFile, 'the shard index', MAX_SMALL_JSON_BYTES, 're-download the shard index.');
  } catch (e) {
    if (isLensError(e)) throw e;
    throw new LensError(`${indexFile}: cannot read the shard index (${(e as NodeJS.ErrnoException).code ?? 'error'}).`, 'not-found');
  }
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw new LensError(`${indexFile}: has no "weight_map" object; re-download the shard index.`, 'corrupt');
  }
  const weightMap = new Map<string, string>();
  const files: string[] = [];
  for (const [name, shard] of Object.entries(map as Record<string, unknown>)) {
    // Shards live beside the index; a path that leaves the folder is refused rather than followed.
    if (typeof shard !== 'string' || shard === '' || path.isAbsolute(shard) || shard.split(/[\\/]/).includes('..')) {
      throw new LensError(`${indexFile}: tensor '${name}' maps to ${JSON.stringify(shard)}, not a shard file in this folder.`, 'corrupt');
    }
    const abs = path.join(dir, shard);
    if (!files.includes(abs)) files.push(abs);
    weightMap.set(name, abs);
  }
  if (files.length === 0) throw new LensError(`${indexFile}: the weight_map is empty; re-download the shard index.`, 'corrupt');
  for (const f of files) {
    if (!fs.existsSync(f)) throw new LensError(`${f}: shard listed in ${path.basename(indexFile)} is missing; download it.`, 'not-found');
  }
  files.sort();
  return { format, files, weightMap };
}

/** The folder name, or `org/name` for a Hugging Face cache snapshot (models--org--name/snapshots/<rev>). */
export function checkpointName(dir: string): string {
  const parts = dir.split(path.sep);
  const snap = parts.lastIndexOf('snapshots');
  const repo = snap > 0 && snap === parts.length - 2 ? parts[snap - 1] : undefined;
  if (repo?.startsWith('models--')) {
    return repo.slice('models--'.length).split('--').join('/');
  }
  return path.basename(dir);
}

/** What refs/main may name: a commit hash or a plain branch-like name, never a path (`../../elsewhere`). */
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** A Hugging Face cache repo folder (models--org--name) resolves to the snapshot its refs/main names. */
export function resolveSnapshot(dir: string): string {
  const ref = path.join(dir, 'refs', 'main');
  if (!path.basename(dir).startsWith('models--') || !fs.existsSync(ref)) return dir;
  const rev = readRegularFile(ref, 'refs/main', 4096).toString('utf8').trim();
  if (rev === '') return dir;
  if (!REVISION.test(rev)) {
    throw new LensError(
      `${ref}: names a revision that is not a plain commit hash or name (it holds a path or odd characters); ` +
        `re-download the model, or pass its snapshots/<revision> folder.`,
      'corrupt',
    );
  }
  const snap = path.join(dir, 'snapshots', rev);
  return fs.existsSync(snap) ? snap : dir;
}
