// Content hashes of a checkpoint's files, streamed so multi-GB files never sit in memory, and remembered by the
// state of the file's inode (device, inode, size, mtime and ctime to the nanosecond) — in this process, and in a
// folder of records when one is given, so that reopening an unchanged checkpoint costs a few stat calls even in a
// new process. Content can only change with the mtime and ctime (utimes can restore an mtime, not a ctime), and
// the inode is part of the key, so a new file at the same path, or a file overwritten in place, is hashed again.
// A record is only kept for a file whose mtime is older than RACY_MS: a write within the file system's timestamp
// granularity of the previous one would leave both times unchanged (git's "racy clean" problem).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../errors';

/** What must stay equal for a file's bytes to be taken as unchanged. */
export interface FileIdentity {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export interface HashedFile {
  /** As given (a symlink stays a symlink here); the identity is that of the file it resolves to. */
  file: string;
  sha256: string;
  identity: FileIdentity;
}

export interface CheckpointHash {
  /** sha256 of `sha256sum`'s output for the files, by base name: `cd DIR && sha256sum config.json model.safetensors | sha256sum`. */
  hash: string;
  files: HashedFile[];
}

const RACY_MS = 2000;
const memo = new Map<string, string>(); // identity key → sha256

export function identityOf(file: string): FileIdentity {
  const st = fs.statSync(file, { bigint: true });
  return { dev: `${st.dev}`, ino: `${st.ino}`, size: `${st.size}`, mtimeNs: `${st.mtimeNs}`, ctimeNs: `${st.ctimeNs}` };
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** Same inode, same size, same mtime: only the ctime moved (a hard link made or removed, a chmod). */
export function sameContentIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

const keyOf = (id: FileIdentity) => `${id.dev}-${id.ino}`;
const recordFile = (store: string, id: FileIdentity) => path.join(store, `${keyOf(id)}.json`);
const settled = (id: FileIdentity) => Date.now() - Number(BigInt(id.mtimeNs) / 1_000_000n) > RACY_MS;

/** The sha256 remembered for exactly this inode state, if any. */
export function recall(id: FileIdentity, store: string | undefined): string | undefined {
  const full = `${keyOf(id)}-${id.size}-${id.mtimeNs}-${id.ctimeNs}`;
  const known = memo.get(full);
  if (known !== undefined || store === undefined) return known;
  try {
    const rec = JSON.parse(fs.readFileSync(recordFile(store, id), 'utf8')) as { identity: FileIdentity; sha256: string };
    if (sameIdentity(rec.identity, id) && /^[0-9a-f]{64}$/.test(rec.sha256)) {
      memo.set(full, rec.sha256);
      return rec.sha256;
    }
  } catch {
    // no record, or an unreadable one: hash the file
  }
  return undefined;
}

/** Remembers `sha256` for the file's current identity, if its mtime has settled. Best effort: a cache, not state. */
export function remember(id: FileIdentity, sha256: string, store: string | undefined, file = ''): void {
  if (!settled(id)) return;
  memo.set(`${keyOf(id)}-${id.size}-${id.mtimeNs}-${id.ctimeNs}`, sha256);
  if (store === undefined) return;
  try {
    fs.mkdirSync(store, { recursive: true });
    const tmp = `${recordFile(store, id)}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ identity: id, sha256, file }));
    fs.renameSync(tmp, recordFile(store, id));
  } catch {
    // a read-only cache folder only costs a re-hash next time
  }
}

async function hashOne(file: string, store: string | undefined): Promise<HashedFile> {
  const before = identityOf(file);
  const known = recall(before, store);
  if (known !== undefined) return { file, sha256: known, identity: before };
  const h = createHash('sha256');
  try {
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 })) h.update(chunk as Buffer);
  } catch (e) {
    throw new LensError(`${file}: cannot read it to hash the checkpoint (${(e as NodeJS.ErrnoException).code ?? 'error'}).`, 'not-found');
  }
  const sha256 = h.digest('hex');
  const after = identityOf(file);
  if (!sameContentIdentity(before, after)) {
    throw new LensError(`${file}: changed while it was being read; wait until it is fully written (a download or copy in progress?) and try again.`, 'corrupt');
  }
  remember(after, sha256, store, fs.realpathSync(file));
  return { file, sha256, identity: after };
}

/** Hashes each file (or recalls it), and the checkpoint as a whole. `store`: a folder for records across processes. */
export async function hashFiles(files: string[], store?: string): Promise<CheckpointHash> {
  const hashed: HashedFile[] = [];
  for (const f of files) hashed.push(await hashOne(f, store));
  const listing = hashed.map((h) => `${h.sha256}  ${path.basename(h.file)}\n`).join('');
  return { hash: createHash('sha256').update(listing).digest('hex'), files: hashed };
}
