// Which cgroup folders hold the memory limits that apply to this process. A container (or a systemd slice, or a CI
// job) often puts the process in a NESTED cgroup, /sys/fs/cgroup/<path> from /proc/self/cgroup, and a limit on any
// ancestor bounds it too; the files at the mount's top alone miss both. Paths are read from /proc/self/cgroup and
// located through /proc/self/mountinfo (a container may mount its own cgroup as the top, so the path is taken
// relative to the mount's root).
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface CgroupFolder {
  version: 1 | 2;
  /** The folder of one cgroup, on the system (under `root` for a fake tree). */
  dir: string;
}

/** Reads that stop here: these are a few lines on any real system. */
const MAX_PROC_FILE = 1 << 20;
/** Deeper nesting than any real hierarchy: stop walking up there. */
const MAX_DEPTH = 64;

/** A small system file's text, or undefined (missing, unreadable, or not Linux). */
export function readSmall(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(MAX_PROC_FILE);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, null);
    return buf.toString('utf8', 0, n).trim();
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

interface Mount {
  version: 1 | 2;
  /** The cgroup path the mount shows at its top ("/" unless a container mounted its own cgroup there). */
  root: string;
  point: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040). */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The cgroup2 mounts and the v1 mounts of the memory controller, from /proc/self/mountinfo's lines. */
function memoryMounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root point options [optional…] - fstype source super-options
    const [head, tail] = line.split(' - ');
    if (head === undefined || tail === undefined) continue;
    const f = head.split(' ');
    const [fstype, , superOptions = ''] = tail.split(' ');
    const root = f[3];
    const point = f[4];
    if (root === undefined || point === undefined) continue;
    if (fstype === 'cgroup2') out.push({ version: 2, root: unescapeMount(root), point: unescapeMount(point) });
    else if (fstype === 'cgroup' && superOptions.split(',').includes('memory'))
      out.push({ version: 1, root: unescapeMount(root), point: unescapeMount(point) });
  }
  return out;
}

/** The process's cgroup path per version, from /proc/self/cgroup ("0::/a/b" for v2, "4:memory:/a/b" for v1). */
function processPaths(procCgroup: string): { 1?: string; 2?: string } {
  const out: { 1?: string; 2?: string } = {};
  for (const line of procCgroup.split('\n')) {
    const m = /^(\d+):([^:]*):(\/.*)$/.exec(line);
    if (!m) continue;
    const [, id, controllers = '', where = '/'] = m;
    if (id === '0' && controllers === '') out[2] ??= where;
    else if (controllers.split(',').includes('memory')) out[1] ??= where;
  }
  return out;
}

/** `where` relative to the mount's root, or undefined when it lies outside what the mount shows. */
function relativeTo(mountRoot: string, where: string): string | undefined {
  const rel = path.posix.relative(mountRoot, where);
  if (rel === '') return '';
  return rel.startsWith('..') || path.posix.isAbsolute(rel) ? undefined : rel;
}

/** The folders from the process's own cgroup up to the mount's top, that one first. */
function upFrom(root: string, point: string, rel: string): string[] {
  const top = path.join(root, point);
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const out: string[] = [];
  for (let k = Math.min(parts.length, MAX_DEPTH); k >= 0; k--) out.push(path.join(top, ...parts.slice(0, k)));
  return out;
}

/** Where the mounts are when mountinfo cannot be read: the usual places, each showing the whole hierarchy. */
const USUAL_MOUNTS: Mount[] = [
  { version: 2, root: '/', point: '/sys/fs/cgroup' },
  { version: 2, root: '/', point: '/sys/fs/cgroup/unified' },
  { version: 1, root: '/', point: '/sys/fs/cgroup/memory' },
];

/**
 * The cgroup folders whose memory limits bound this process, each version's own cgroup first and then its
 * ancestors up to the mount's top. `root` stands for "/" (a fake tree in tests). A path that cannot be placed
 * falls back to the mount's top, which is what a container that mounts its own cgroup shows.
 */
export function cgroupFolders(root: string): CgroupFolder[] {
  const paths = processPaths(readSmall(path.join(root, 'proc/self/cgroup')) ?? '');
  const info = readSmall(path.join(root, 'proc/self/mountinfo'));
  const mounts = info === undefined ? USUAL_MOUNTS : memoryMounts(info);
  const out: CgroupFolder[] = [];
  const seen = new Set<string>();
  for (const m of mounts) {
    const where = paths[m.version] ?? '/';
    const rel = relativeTo(m.root, where) ?? '';
    for (const dir of upFrom(root, m.point, rel)) {
      if (seen.has(dir)) continue;
      seen.add(dir);
      out.push({ version: m.version, dir });
    }
  }
  return out;
}
