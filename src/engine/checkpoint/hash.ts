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
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import { makeDirs } from './make-dirs';

/** What must stay equal for a file's bytes to be taken as unchanged. */
export interface FileIdentity {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

/** What is remembered about a file's bytes: their hash, and what a ByteObserver found in them. */
export interface Known {
  sha256: string;
  findings?: unknown;
}

export interface HashedFile extends Known {
  /** As given (a symlink stays a symlink here); the identity is that of the file it resolves to. */
  file: string;
  identity: FileIdentity;
}

/**
 * A check that needs every byte of the files too (a scan of the weights), fed while they are hashed so that they
 * are read once. Its findings per file are remembered with the hash, so an unchanged file is neither re-read nor
 * re-scanned.
 */
export interface ByteObserver {
  /** `chunk` holds bytes [at, at + chunk.length) of files[file], in order. */
  feed(file: number, chunk: Buffer, at: number): void;
  /** What files[file] showed, JSON-serialisable and never undefined (null for nothing); called once it is read. */
  findings(file: number): unknown;
  /** Findings remembered for files[file], which was not read this time. */
  recalled(file: number, findings: unknown): void;
}

export interface CheckpointHash {
  /** sha256 of `sha256sum`'s output for the files, by base name: `cd DIR && sha256sum config.json model.safetensors | sha256sum`. */
  hash: string;
  files: HashedFile[];
}

const RACY_MS = 2000;
const memo = new Map<string, Known>(); // full identity → what is known

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

/** The file still holds the bytes it was hashed with (same inode, size and mtime; a moved ctime alone is fine). */
export function unchangedSinceHashed(h: HashedFile): boolean {
  try {
    return sameContentIdentity(identityOf(h.file), h.identity);
  } catch {
    return false;
  }
}

const keyOf = (id: FileIdentity) => `${id.dev}-${id.ino}`;
const recordFile = (store: string, id: FileIdentity) => path.join(store, `${keyOf(id)}.json`);
const settled = (id: FileIdentity) => Date.now() - Number(BigInt(id.mtimeNs) / 1_000_000n) > RACY_MS;

const fullKey = (id: FileIdentity) => `${keyOf(id)}-${id.size}-${id.mtimeNs}-${id.ctimeNs}`;

/** What is remembered for exactly this inode state, if anything. */
export function recall(id: FileIdentity, store: string | undefined): Known | undefined {
  const known = memo.get(fullKey(id));
  if (known !== undefined || store === undefined) return known;
  try {
    const rec = JSON.parse(fs.readFileSync(recordFile(store, id), 'utf8')) as { identity: FileIdentity } & Known;
    if (sameIdentity(rec.identity, id) && /^[0-9a-f]{64}$/.test(rec.sha256)) {
      const found: Known = { sha256: rec.sha256, findings: rec.findings };
      memo.set(fullKey(id), found);
      return found;
    }
  } catch {
    // no record, or an unreadable one: hash the file
  }
  return undefined;
}

/** Remembers what is known for the file's current identity, if its mtime has settled. Best effort: a cache. */
export function remember(id: FileIdentity, known: Known, store: string | undefined, file = ''): void {
  if (!settled(id)) return;
  memo.set(fullKey(id), { sha256: known.sha256, findings: known.findings });
  if (store === undefined) return;
  try {
    makeDirs(store);
    const tmp = `${recordFile(store, id)}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ identity: id, sha256: known.sha256, findings: known.findings, file }));
    fs.renameSync(tmp, recordFile(store, id));
  } catch {
    // a read-only cache folder only costs a re-hash next time
  }
}

async function hashOne(files: string[], k: number, store: string | undefined, observer: ByteObserver | undefined): Promise<HashedFile> {
  const file = at(files, k, 'file');
  const before = identityOf(file);
  const known = recall(before, store);
  if (known !== undefined && (observer === undefined || known.findings !== undefined)) {
    if (observer) observer.recalled(k, known.findings);
    return { file, ...known, identity: before };
  }
  const h = createHash('sha256');
  try {
    let at = 0;
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 })) {
      h.update(chunk as Buffer);
      observer?.feed(k, chunk as Buffer, at);
      at += (chunk as Buffer).length;
    }
  } catch (e) {
    if (e instanceof LensError) throw e;
    throw new LensError(`${file}: cannot read it to hash the checkpoint (${(e as NodeJS.ErrnoException).code ?? 'error'}).`, 'not-found');
  }
  const sha256 = h.digest('hex');
  const after = identityOf(file);
  if (!sameContentIdentity(before, after)) {
    throw new LensError(
      `${file}: changed while it was being read; wait until it is fully written (a download or copy in progress?) and try again.`,
      'corrupt',
    );
  }
  const found: Known = { sha256, findings: observer?.findings(k) };
  remember(after, found, store, fs.realpathSync(file));
  return { file, ...found, identity: after };
}

/**
 * Hashes each file (or recalls it), and the checkpoint as a whole. `store`: a folder for records across
 * processes; `observer`: another check fed the same bytes.
 */
export async function hashFiles(files: string[], store?: string, observer?: ByteObserver): Promise<CheckpointHash> {
  const hashed: HashedFile[] = [];
  for (let k = 0; k < files.length; k++) hashed.push(await hashOne(files, k, store, observer));
  const listing = hashed.map((h) => `${h.sha256}  ${path.basename(h.file)}\n`).join('');
  return { hash: createHash('sha256').update(listing).digest('hex'), files: hashed };
}
