// Memory the process can still take: the system's MemAvailable, or less when a container's cgroup limit is
// lower. A container reports the host's /proc/meminfo, so on a 64 GB host a 4 GB container would be told 60 GB is
// free and the length check would let an input through that the kernel then kills. Both cgroup versions are read;
// the smallest room wins.
import * as fs from 'node:fs';
import * as os from 'node:os';

/** Where each figure is read; tests point these at files of their own. */
export interface MemoryFiles {
  meminfo: string;
  /** cgroup v2: the limit ("max" for none) and the usage, in bytes. */
  v2Max: string;
  v2Current: string;
  /** memory.stat of each version: its inactive_file (page cache the kernel drops first) counts as room. */
  v2Stat: string;
  /** cgroup v1: the limit (a huge number for none) and the usage, in bytes. */
  v1Limit: string;
  v1Usage: string;
  v1Stat: string;
}

export const SYSTEM_MEMORY_FILES: MemoryFiles = {
  meminfo: '/proc/meminfo',
  v2Max: '/sys/fs/cgroup/memory.max',
  v2Current: '/sys/fs/cgroup/memory.current',
  v2Stat: '/sys/fs/cgroup/memory.stat',
  v1Limit: '/sys/fs/cgroup/memory/memory.limit_in_bytes',
  v1Usage: '/sys/fs/cgroup/memory/memory.usage_in_bytes',
  v1Stat: '/sys/fs/cgroup/memory/memory.stat',
};

/** cgroup v1 writes "no limit" as the largest page-aligned signed 64-bit value; anything this large is none. */
const V1_UNLIMITED = 2 ** 62;

function readSmall(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined; // not Linux, no cgroup of that version, or not readable: that figure is unknown
  }
}

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

/** Bytes the process can allocate now: the smallest of MemAvailable (else os.freemem()) and each cgroup's room. */
export function availableMemory(files: MemoryFiles = SYSTEM_MEMORY_FILES): number {
  const m = /MemAvailable:\s+(\d+) kB/.exec(readSmall(files.meminfo) ?? '');
  const candidates = [m ? Number(m[1]) * 1024 : os.freemem()];
  // "max" is v2's way to say no limit; bytes() reads it as undefined.
  const v2 = room(bytes(readSmall(files.v2Max)), bytes(readSmall(files.v2Current)), statField(files.v2Stat, 'inactive_file'));
  const v1 = room(bytes(readSmall(files.v1Limit)), bytes(readSmall(files.v1Usage)), statField(files.v1Stat, 'total_inactive_file'));
  for (const r of [v2, v1]) if (r !== undefined) candidates.push(r);
  return Math.min(...candidates);
}
