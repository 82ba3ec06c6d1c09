// A graph cache entry: found valid, or built. Each entry holds whatever the graph builder writes, the checkpoint
// files it references in place (hard-linked, or copied across file systems) and a manifest recording every
// file's inode state. An entry is used only while each file is in the state recorded: a hard link shares its
// inode with the user's file, so a checkpoint overwritten in place changes the entry too, and is caught here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type FileIdentity, type HashedFile, identityOf, recall, remember, sameIdentity, unchangedSinceHashed } from '../checkpoint/hash';
import { makeDirs } from '../checkpoint/make-dirs';
import { LensError } from '../errors';
import { formatBytes } from '../../shared/format';
import {
  type EntryFile,
  type EntryModel,
  GB,
  graphsOf,
  hashStoreOf,
  MANIFEST,
  type Manifest,
  MANIFEST_VERSION,
  readManifest,
  writeManifest,
} from './cache-layout';
import { evict, markInUse } from './cache-usage';

/** What a build callback gets: a fresh folder, and a way to place checkpoint files in it. */
export interface EntryWriter {
  dir: string;
  /** Puts checkpoint file `source` (one of the hashed files) into the entry as `location`: hard link, else copy. */
  place(source: string, location: string): void;
}

export interface CacheEntry {
  dir: string;
  /** True when this call built the entry (a cold load). */
  built: boolean;
  buildMs: number;
  /** This process no longer needs the entry: it may be evicted. */
  release(): void;
}

export interface OpenOptions {
  /** Evict least recently used entries beyond this size (decimal GB); undefined: no limit. */
  maxGB?: number;
  log?: (line: string) => void;
}

/**
 * The entry for `key`, built by `build` unless a valid one exists. `hashed` are the checkpoint's files with the
 * inode state their hashes were taken in: a file placed in the entry must still be in that state.
 */
export function openEntry(
  cacheDir: string,
  key: string,
  model: EntryModel,
  hashed: HashedFile[],
  build: (w: EntryWriter) => void,
  opts: OpenOptions = {},
): CacheEntry {
  const found = findEntry(cacheDir, key, opts);
  if (found) return found;
  const dir = path.join(graphsOf(cacheDir), key);
  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    makeDirs(tmp);
    const placed: EntryFile[] = [];
    build({ dir: tmp, place: (source, location) => placed.push(place(cacheDir, hashed, source, path.join(tmp, location), location)) });
    for (const h of hashed) unchangedWhileLoading(h);
    const files = fs
      .readdirSync(tmp)
      .map((location) => placed.find((p) => p.location === location) ?? { location, identity: identityOf(path.join(tmp, location)) });
    const manifest: Manifest = { version: MANIFEST_VERSION, key, model, created: new Date().toISOString(), files };
    fs.writeFileSync(path.join(tmp, MANIFEST), JSON.stringify(manifest, null, 1));
    if (!publish(cacheDir, tmp, dir, key)) {
      // Another process built the same entry meanwhile: use theirs, which it may already have open.
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  } catch (e) {
    try {
      fs.rmSync(tmp, { recursive: true, force: true });
    } catch {
      // the cache folder itself is unusable: the error below says so
    }
    if (e instanceof LensError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    // ENOENT from a mkdir whose parent exists: a file system that takes no new folders (/proc, /sys).
    if (
      code === 'EACCES' ||
      code === 'EPERM' ||
      code === 'EROFS' ||
      code === 'ENOSPC' ||
      code === 'EDQUOT' ||
      code === 'ENOTDIR' ||
      code === 'EEXIST' ||
      (code === 'ENOENT' && (e as NodeJS.ErrnoException).syscall === 'mkdir')
    ) {
      const fix = code === 'ENOSPC' || code === 'EDQUOT' ? 'free space, or point' : 'point';
      throw new LensError(
        `cannot write the graph cache in ${cacheDir} (${code}): ${fix} XDG_CACHE_HOME (CLI: --cache-dir) at a folder you can write`,
        'runtime',
      );
    }
    throw e;
  }
  return bounded(cacheDir, entry(cacheDir, dir, key, true, performance.now() - t0), opts);
}

/** The valid entry for `key`, opened (held until release()), or undefined: nothing is built. */
export function findEntry(cacheDir: string, key: string, opts: OpenOptions = {}): CacheEntry | undefined {
  const dir = path.join(graphsOf(cacheDir), key);
  return verify(cacheDir, dir, key) ? bounded(cacheDir, entry(cacheDir, dir, key, false, 0), opts) : undefined;
}

/**
 * Moves the built entry into place, unless a valid one is there (false: use that one). An invalid one is moved
 * aside whole before it is removed, and a rename that loses a race with another process's publish (ENOTEMPTY)
 * looks again, so processes building the same entry at once never fail on each other's folders.
 */
function publish(cacheDir: string, tmp: string, dir: string, key: string): boolean {
  for (let attempt = 0; ; attempt++) {
    if (verify(cacheDir, dir, key)) return false;
    const aside = `${dir}.tmp-${process.pid}-${Date.now()}-old${attempt}`;
    try {
      fs.renameSync(dir, aside);
      fs.rmSync(aside, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    try {
      fs.renameSync(tmp, dir);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || attempt >= 5) throw e;
    }
  }
}

/** Applies the size limit on every open (not only when the cache grows), so a lowered limit takes effect. */
function bounded(cacheDir: string, opened: CacheEntry, opts: OpenOptions): CacheEntry {
  if (opts.maxGB === undefined) return opened;
  for (const gone of evict(cacheDir, opts.maxGB * GB)) {
    opts.log?.(
      `graph cache over ${opts.maxGB} GB: removed ${gone.model?.name ?? gone.key} (${formatBytes(gone.bytes, 'decimal')}, last used ${gone.lastUsed.toISOString()})`,
    );
  }
  return opened;
}

/** Hard link to the real file (link(2) does not follow symlinks: a hub snapshot's relative link would dangle). */
function place(cacheDir: string, hashed: HashedFile[], source: string, dest: string, location: string): EntryFile {
  const h = hashed.find((f) => f.file === source);
  if (h === undefined) throw new Error(`graph cache: ${source} was not hashed with the checkpoint`);
  const real = fs.realpathSync(source);
  let linked = true;
  try {
    fs.linkSync(real, dest);
  } catch {
    // Another file system, or a file this user may not link (protected_hardlinks): copy.
    linked = false;
    fs.copyFileSync(real, dest);
  }
  unchangedWhileLoading(h);
  const identity = identityOf(dest);
  // Linking moved the shared inode's ctime: remember the hash under the new state so the next open need not re-read.
  if (linked) remember(identity, h, hashStoreOf(cacheDir), real);
  return { location, identity, source: real, sha256: h.sha256 };
}

function unchangedWhileLoading(h: HashedFile): void {
  if (!unchangedSinceHashed(h)) {
    throw new LensError(`${h.file}: changed while the model was loading; wait until it is fully written and try again.`, 'corrupt');
  }
}

/**
 * Every file in the state the manifest records. A placed file whose ctime alone moved (another hard link to the
 * same inode made or removed) still counts when its content hash is remembered for the new state.
 */
function verify(cacheDir: string, dir: string, key: string): boolean {
  const m = readManifest(dir);
  if (m === undefined || m.key !== key) return false;
  let moved = false;
  for (const f of m.files) {
    let now: FileIdentity;
    try {
      now = identityOf(path.join(dir, f.location));
    } catch {
      return false;
    }
    if (sameIdentity(now, f.identity)) continue;
    if (f.sha256 === undefined || recall(now, hashStoreOf(cacheDir))?.sha256 !== f.sha256) return false;
    f.identity = now;
    moved = true;
  }
  if (moved) writeManifest(dir, m);
  return true;
}

function entry(cacheDir: string, dir: string, key: string, built: boolean, buildMs: number): CacheEntry {
  return { dir, built, buildMs, release: markInUse(cacheDir, dir, key) };
}
