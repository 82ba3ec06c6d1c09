// A fake /proc and /sys/fs/cgroup tree for the memory check (DEBERTA_LENS_MEMORY_ROOT points at it): a host
// figure, the process's cgroup path, the mounts, and each cgroup folder's files. Used by the hardening test and
// the fuzz family of cgroup limits.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One cgroup folder's figures; a missing field: the file does not exist. */
export interface FakeGroup {
  /** v2 memory.max / v1 memory.limit_in_bytes, as written ("max", a number, or garbage). */
  limit?: string;
  /** memory.current / memory.usage_in_bytes. */
  usage?: string;
  /** memory.stat's inactive_file (v2) or total_inactive_file (v1). */
  inactive?: number;
}

export interface FakeTree {
  /** MemAvailable in bytes (whole KiB), or undefined for no meminfo line. */
  memAvailable?: number;
  version: 1 | 2;
  /** The process's path ("/a/b") as /proc/self/cgroup lists it. */
  cgroupPath: string;
  /** Where the hierarchy is mounted and which cgroup path its top shows ("/" unless a container mounted its own). */
  mountPoint: string;
  mountRoot: string;
  /** false: no mountinfo (the usual places are assumed). */
  mountinfo?: boolean;
  /** Figures per cgroup path under the mount's top ("" is the top itself). */
  groups: Record<string, FakeGroup>;
}

const GiB = 2 ** 30;

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** mountinfo escapes spaces as \040. */
const esc = (s: string) => s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/** Writes `tree` under `root`; returns root. */
export function writeFakeTree(root: string, tree: FakeTree): string {
  const meminfo = `MemTotal:       ${64 * 2 ** 20} kB\nMemFree:        1000 kB\n`;
  write(
    path.join(root, 'proc/meminfo'),
    tree.memAvailable === undefined ? meminfo : `${meminfo}MemAvailable:   ${Math.floor(tree.memAvailable / 1024)} kB\n`,
  );
  const v1Line = `4:memory:${tree.cgroupPath}`;
  const lines = tree.version === 2 ? ['0::' + tree.cgroupPath] : ['12:cpu,cpuacct:/', v1Line, '1:name=systemd:/', '0::/'];
  write(path.join(root, 'proc/self/cgroup'), `${lines.join('\n')}\n`);
  if (tree.mountinfo !== false) {
    const fs2 = tree.version === 2 ? 'cgroup2 cgroup2 rw,nsdelegate' : 'cgroup cgroup rw,memory';
    const mounts = [
      '22 1 0:21 / / rw,relatime - overlay overlay rw',
      `30 22 0:27 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755`,
      `34 30 0:31 ${esc(tree.mountRoot)} ${esc(tree.mountPoint)} rw,nosuid shared:9 - ${fs2}`,
      `35 30 0:32 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct`,
    ];
    write(path.join(root, 'proc/self/mountinfo'), `${mounts.join('\n')}\n`);
  }
  const [limit, usage, stat, inactive] =
    tree.version === 2
      ? ['memory.max', 'memory.current', 'memory.stat', 'inactive_file']
      : ['memory.limit_in_bytes', 'memory.usage_in_bytes', 'memory.stat', 'total_inactive_file'];
  for (const [where, g] of Object.entries(tree.groups)) {
    const dir = path.join(root, tree.mountPoint, where);
    fs.mkdirSync(dir, { recursive: true });
    if (g.limit !== undefined) write(path.join(dir, limit), `${g.limit}\n`);
    if (g.usage !== undefined) write(path.join(dir, usage), `${g.usage}\n`);
    if (g.inactive !== undefined) write(path.join(dir, stat), `anon 4096\n${inactive} ${g.inactive}\nactive_file 0\n`);
  }
  return root;
}

/** What the memory check must find in `tree`: the smallest of MemAvailable and every limited folder's room on the
 *  path from the process's cgroup up to the mount's top. Computed from the figures written, not by the engine. */
export function expectedRoom(tree: FakeTree): number {
  const rel = tree.cgroupPath.startsWith(tree.mountRoot)
    ? tree.cgroupPath.slice(tree.mountRoot.length).replace(/^\/+/, '')
    : tree.mountRoot === '/'
      ? tree.cgroupPath.replace(/^\/+/, '')
      : '';
  const parts = rel === '' ? [] : rel.split('/');
  const chain = parts.map((_, k) => parts.slice(0, k + 1).join('/'));
  let best = tree.memAvailable === undefined ? Infinity : Math.floor(tree.memAvailable / 1024) * 1024;
  for (const where of ['', ...chain]) {
    const g = tree.groups[where];
    if (g?.limit === undefined || !/^\d+$/.test(g.limit)) continue;
    const lim = Number(g.limit);
    if (lim >= 2 ** 62) continue;
    const use = g.usage !== undefined && /^\d+$/.test(g.usage) ? Number(g.usage) : 0;
    best = Math.min(best, Math.min(lim, Math.max(0, lim - use + (g.inactive ?? 0))));
  }
  return best;
}

export { GiB };
