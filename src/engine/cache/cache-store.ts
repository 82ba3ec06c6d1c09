// The graph cache on disk: one folder per checkpoint key under <cacheDir>/graphs holding whatever the graph
// builder writes, the checkpoint files it references in place (hard-linked, or copied across file systems), and
// manifest.json, written last, recording every file's inode state. An entry is used only while each file is in
// the state recorded: a hard link shares its inode with the user's file, so a checkpoint overwritten in place
// changes the entry too, and is caught here. Least recently used entries are evicted beyond a size limit, never
// one that a live process has open (a marker per process under <cacheDir>/in-use).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type FileIdentity, type HashedFile, identityOf, recall, remember, sameContentIdentity, sameIdentity } from '../checkpoint/hash';
import { LensError } from '../errors';

export const MANIFEST = 'manifest.json';
const MANIFEST_VERSION = 1;
export const DEFAULT_CACHE_MAX_GB = 4;
const GB = 1e9;

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'deberta-lens');
}

export const hashStoreOf = (cacheDir: string) => path.join(cacheDir, 'hashes');
const graphsOf = (cacheDir: string) => path.join(cacheDir, 'graphs');
const inUseOf = (cacheDir: string) => path.join(cacheDir, 'in-use');

/** The checkpoint an entry was built from, as the manifest and `cache list` show it. */
export interface EntryModel {
  name: string;
  dir: string;
  hash: string;
}

interface EntryFile {
  location: string;
  identity: FileIdentity;
  /** For checkpoint files placed in the entry: their real path and content hash. */
  source?: string;
  sha256?: string;
}

interface Manifest {
  version: number;
  key: string;
  model: EntryModel;
  created: string;
  files: EntryFile[];
}

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
  const dir = path.join(graphsOf(cacheDir), key);
  if (verify(cacheDir, dir, key)) return bounded(cacheDir, use(cacheDir, dir, key, false, 0), opts);
  const t0 = performance.now();
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.mkdirSync(tmp, { recursive: true });
    const placed: EntryFile[] = [];
    build({ dir: tmp, place: (source, location) => placed.push(place(cacheDir, hashed, source, path.join(tmp, location), location)) });
    for (const h of hashed) unchangedSinceHashed(h);
    const files = fs.readdirSync(tmp).map((location) => placed.find((p) => p.location === location) ?? { location, identity: identityOf(path.join(tmp, location)) });
    const manifest: Manifest = { version: MANIFEST_VERSION, key, model, created: new Date().toISOString(), files };
    fs.writeFileSync(path.join(tmp, MANIFEST), JSON.stringify(manifest, null, 1));
    if (verify(cacheDir, dir, key)) {
      // Another process built the same entry meanwhile: use theirs, which it may already have open.
      fs.rmSync(tmp, { recursive: true, force: true });
      return bounded(cacheDir, use(cacheDir, dir, key, true, performance.now() - t0), opts);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (e instanceof LensError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC' || code === 'EDQUOT') {
      throw new LensError(`cannot write the graph cache in ${cacheDir} (${code}): free space or choose another cache folder`, 'runtime');
    }
    throw e;
  }
  return bounded(cacheDir, use(cacheDir, dir, key, true, performance.now() - t0), opts);
}

/** Applies the size limit on every open (not only when the cache grows), so a lowered limit takes effect. */
function bounded(cacheDir: string, entry: CacheEntry, opts: OpenOptions): CacheEntry {
  if (opts.maxGB === undefined) return entry;
  for (const gone of evict(cacheDir, opts.maxGB * GB)) {
    opts.log?.(`graph cache over ${opts.maxGB} GB: removed ${gone.model?.name ?? gone.key} (${formatBytes(gone.bytes)}, last used ${gone.lastUsed.toISOString()})`);
  }
  return entry;
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
  unchangedSinceHashed(h);
  const identity = identityOf(dest);
  // Linking moved the shared inode's ctime: remember the hash under the new state so the next open need not re-read.
  if (linked) remember(identity, h.sha256, hashStoreOf(cacheDir), real);
  return { location, identity, source: real, sha256: h.sha256 };
}

function unchangedSinceHashed(h: HashedFile): void {
  let now: FileIdentity | undefined;
  try {
    now = identityOf(h.file);
  } catch {
    now = undefined;
  }
  if (now === undefined || !sameContentIdentity(now, h.identity)) {
    throw new LensError(`${h.file}: changed while the model was loading; wait until it is fully written and try again.`, 'corrupt');
  }
}

function readManifest(dir: string): Manifest | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
    return m?.version === MANIFEST_VERSION && Array.isArray(m.files) ? m : undefined;
  } catch {
    return undefined;
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
    if (f.sha256 === undefined || recall(now, hashStoreOf(cacheDir)) !== f.sha256) return false;
    f.identity = now;
    moved = true;
  }
  if (moved) writeManifest(dir, m);
  return true;
}

function writeManifest(dir: string, m: Manifest): void {
  const tmp = path.join(dir, `${MANIFEST}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(m, null, 1));
  fs.renameSync(tmp, path.join(dir, MANIFEST));
}

const held = new Set<string>(); // in-use markers this process created
process.once('exit', () => {
  for (const f of held) fs.rmSync(f, { force: true });
});

/** Marks the entry used now (the manifest's mtime is its last use) and in use by this process. */
function use(cacheDir: string, dir: string, key: string, built: boolean, buildMs: number): CacheEntry {
  const now = new Date();
  try {
    fs.utimesSync(path.join(dir, MANIFEST), now, now);
  } catch {
    // a read-only cache still serves; it only cannot record use
  }
  const marker = path.join(inUseOf(cacheDir), `${key}.${process.pid}.${held.size}-${Date.now()}`);
  try {
    fs.mkdirSync(inUseOf(cacheDir), { recursive: true });
    fs.writeFileSync(marker, '');
    held.add(marker);
  } catch {
    // without a marker the entry may be evicted under us; nothing else breaks
  }
  return {
    dir,
    built,
    buildMs,
    release: () => {
      held.delete(marker);
      fs.rmSync(marker, { force: true });
    },
  };
}

export interface EntryInfo {
  key: string;
  dir: string;
  model?: EntryModel;
  /** Bytes that removing the entry frees: files it shares with a checkpoint (hard links) do not count. */
  bytes: number;
  /** Bytes of checkpoint files referenced through hard links (on disk anyway, in the model folder). */
  linkedBytes: number;
  lastUsed: Date;
  /** Process ids that have it open. */
  users: number[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** key → live pids holding it; markers of dead processes are removed on the way. */
function users(cacheDir: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(inUseOf(cacheDir));
  } catch {
    return out;
  }
  for (const name of names) {
    const [key, pidText] = name.split('.');
    const pid = Number(pidText);
    if (!alive(pid)) {
      fs.rmSync(path.join(inUseOf(cacheDir), name), { force: true });
      continue;
    }
    out.set(key, [...(out.get(key) ?? []), pid]);
  }
  return out;
}

function sizes(dir: string): { bytes: number; linkedBytes: number } {
  let bytes = 0;
  let linkedBytes = 0;
  for (const name of fs.readdirSync(dir)) {
    const st = fs.lstatSync(path.join(dir, name));
    if (!st.isFile()) continue;
    if (st.nlink > 1) linkedBytes += st.size;
    else bytes += st.blocks ? st.blocks * 512 : st.size;
  }
  return { bytes, linkedBytes };
}

/** Entries, most recently used first. Leftovers of builds whose process died are removed on the way. */
export function listEntries(cacheDir: string): EntryInfo[] {
  const root = graphsOf(cacheDir);
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const using = users(cacheDir);
  const out: EntryInfo[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    const tmp = /\.tmp-(\d+)-/.exec(name);
    if (tmp) {
      if (!alive(Number(tmp[1]))) fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    try {
      const m = readManifest(dir);
      const st = fs.statSync(m ? path.join(dir, MANIFEST) : dir);
      out.push({ key: name, dir, model: m?.model, ...sizes(dir), lastUsed: st.mtime, users: using.get(name) ?? [] });
    } catch {
      // removed meanwhile
    }
  }
  return out.sort((a, b) => b.lastUsed.getTime() - a.lastUsed.getTime());
}

/** Removes least recently used entries until the rest take at most `maxBytes`; entries in use stay. */
export function evict(cacheDir: string, maxBytes: number): EntryInfo[] {
  const entries = listEntries(cacheDir);
  let total = entries.reduce((s, e) => s + e.bytes, 0);
  const gone: EntryInfo[] = [];
  for (const e of [...entries].reverse()) {
    if (total <= maxBytes) break;
    if (e.users.length > 0 || !remove(e)) continue;
    total -= e.bytes;
    gone.push(e);
  }
  return gone;
}

/** Removes every entry not in use, and the remembered file hashes. Returns what went and what stayed. */
export function clearCache(cacheDir: string): { removed: EntryInfo[]; kept: EntryInfo[] } {
  const removed: EntryInfo[] = [];
  const kept: EntryInfo[] = [];
  for (const e of listEntries(cacheDir)) (e.users.length === 0 && remove(e) ? removed : kept).push(e);
  fs.rmSync(hashStoreOf(cacheDir), { recursive: true, force: true });
  return { removed, kept };
}

function remove(e: EntryInfo): boolean {
  // Renamed away first so that no reader sees a half-removed entry as valid.
  const trash = `${e.dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    fs.renameSync(e.dir, trash);
  } catch {
    return false;
  }
  try {
    fs.rmSync(trash, { recursive: true, force: true });
  } catch {
    // a file still open elsewhere (Windows): the next listing retries once its process is gone
  }
  return true;
}

export function formatBytes(n: number): string {
  if (n >= GB) return `${(n / GB).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e3).toFixed(1)} kB`;
}
