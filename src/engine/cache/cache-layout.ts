// The graph cache's layout on disk, shared by the code that fills it and the code that bounds it:
//   <cacheDir>/graphs/<key>/   one folder per checkpoint key: whatever the graph builder writes, the checkpoint
//                              files it references in place, and manifest.json (written last; its mtime is the
//                              entry's last use)
//   <cacheDir>/in-use/<key>.<pid>.<n>   a marker per process that has the entry open
//   <cacheDir>/hashes/         file hashes remembered per inode state (checkpoint/hash.ts)
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FileIdentity } from '../checkpoint/hash';

export const MANIFEST = 'manifest.json';
export const MANIFEST_VERSION = 1;
export const DEFAULT_CACHE_MAX_GB = 4;
export const GB = 1e9;

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'deberta-lens');
}

export const hashStoreOf = (cacheDir: string) => path.join(cacheDir, 'hashes');
export const graphsOf = (cacheDir: string) => path.join(cacheDir, 'graphs');
export const inUseOf = (cacheDir: string) => path.join(cacheDir, 'in-use');

/**
 * The folder name of a checkpoint's entry: what it holds (`version`, e.g. a graph's version), the checkpoint's
 * content hash, and a variant of the same thing (`\nheads/2`), hashed. The one derivation every entry uses.
 */
export function entryKey(version: string, checkpointHash: string, variant = ''): string {
  return createHash('sha256').update(`${version}\n${checkpointHash}${variant}`).digest('hex').slice(0, 20);
}

/** The checkpoint an entry was built from, as the manifest and `cache list` show it. */
export interface EntryModel {
  name: string;
  dir: string;
  hash: string;
}

export interface EntryFile {
  location: string;
  identity: FileIdentity;
  /** For checkpoint files placed in the entry: their real path and content hash. */
  source?: string;
  sha256?: string;
}

export interface Manifest {
  version: number;
  key: string;
  model: EntryModel;
  created: string;
  files: EntryFile[];
}

export function readManifest(dir: string): Manifest | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
    return m?.version === MANIFEST_VERSION && Array.isArray(m.files) ? m : undefined;
  } catch {
    return undefined;
  }
}

export function writeManifest(dir: string, m: Manifest): void {
  const tmp = path.join(dir, `${MANIFEST}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(m, null, 1));
  fs.renameSync(tmp, path.join(dir, MANIFEST));
}
