// Which cache entries are in use and how much space they take: in-use markers per process, the listing that
// `deberta-lens cache list` shows, least-recently-used eviction and `cache clear`. An entry a live process has
// open is never removed; markers of dead processes and leftovers of interrupted builds are cleared on the way.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeDirs } from '../checkpoint/make-dirs';
import { type EntryModel, graphsOf, hashStoreOf, inUseOf, MANIFEST, readManifest } from './cache-layout';

const held = new Set<string>(); // in-use markers this process created
process.once('exit', () => {
  for (const f of held) fs.rmSync(f, { force: true });
});

/** Marks the entry used now (the manifest's mtime is its last use) and in use by this process; returns the release. */
export function markInUse(cacheDir: string, dir: string, key: string): () => void {
  const now = new Date();
  try {
    fs.utimesSync(path.join(dir, MANIFEST), now, now);
  } catch {
    // a read-only cache still serves; it only cannot record use
  }
  const marker = path.join(inUseOf(cacheDir), `${key}.${process.pid}.${held.size}-${Date.now()}`);
  try {
    makeDirs(inUseOf(cacheDir));
    fs.writeFileSync(marker, '');
    held.add(marker);
  } catch {
    // without a marker the entry may be evicted under us; nothing else breaks
  }
  return () => {
    held.delete(marker);
    fs.rmSync(marker, { force: true });
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
  let names: string[];
  try {
    names = fs.readdirSync(inUseOf(cacheDir));
  } catch {
    return out;
  }
  for (const name of names) {
    const [key, pidText] = name.split('.');
    if (key === undefined) continue;
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
