// Memory the process can still take: the system's MemAvailable, or less when a container's cgroup limit is
// lower. A container reports the host's /proc/meminfo, so on a 64 GB host a 4 GB container would be told 60 GB is
// free and the length check would let an input through that the kernel then kills. Both cgroup versions are read,
// for the process's own (often nested) cgroup and every ancestor up to the mount's top (cgroup-folders.ts); the
// smallest room wins.
import * as os from 'node:os';
import * as path from 'node:path';
import { cgroupFolders, readSmall, type CgroupFolder } from './cgroup-folders';

/** Set to a folder that stands for "/" when the figures are read (a fake /proc and /sys/fs/cgroup tree): how the
 *  tests and the fuzz run give the memory check a container of their own making. */
export const MEMORY_ROOT_ENV = 'DEBERTA_LENS_MEMORY_ROOT';

/** cgroup v1 writes "no limit" as the largest page-aligned signed 64-bit value; anything this large is none. */
const V1_UNLIMITED = 2 ** 62;

function bytes(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A field of memory.stat ("inactive_file 123"), or 0. Usage counts the page cache, and reading a checkpoint fills
 *  it: without this, a container that just read its weights would look full. */
function statField(file: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readSmall(file) ?? '');
  return m ? Number(m[1]) : 0;
}

/** Room under a cgroup limit (limit − usage + reclaimable cache, never below 0, never above the limit), or
 *  undefined when there is no limit or no figure. */
function room(limit: number | undefined, usage: number | undefined, reclaimable: number): number | undefined {
  if (limit === undefined || limit >= V1_UNLIMITED) return undefined;
  return Math.min(limit, Math.max(0, limit - (usage ?? 0) + reclaimable));
}

/** The room one cgroup folder leaves ("max" is v2's way to say no limit; bytes() reads it as undefined). */
function folderRoom({ version, dir }: CgroupFolder): number | undefined {
  const f = (name: string) => path.join(dir, name);
  if (version === 2)
    return room(bytes(readSmall(f('memory.max'))), bytes(readSmall(f('memory.current'))), statField(f('memory.stat'), 'inactive_file'));
  return room(
    bytes(readSmall(f('memory.limit_in_bytes'))),
    bytes(readSmall(f('memory.usage_in_bytes'))),
    statField(f('memory.stat'), 'total_inactive_file'),
  );
}

/** The folder that stands for "/": $DEBERTA_LENS_MEMORY_ROOT when set, else "/" itself. */
export function memoryRoot(): string {
  const r = process.env[MEMORY_ROOT_ENV];
  return r ? path.resolve(r) : '/';
}

/** Bytes the process can allocate now: the smallest of MemAvailable (else os.freemem()) and each cgroup's room. */
export function availableMemory(root = memoryRoot()): number {
  const m = /MemAvailable:\s+(\d+) kB/.exec(readSmall(path.join(root, 'proc/meminfo')) ?? '');
  const candidates = [m ? Number(m[1]) * 1024 : os.freemem()];
  for (const folder of cgroupFolders(root)) {
    const r = folderRoom(folder);
    if (r !== undefined) candidates.push(r);
  }
  return Math.min(...candidates);
}
