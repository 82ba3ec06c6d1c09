// Cgroup limits: a fake /proc and /sys/fs/cgroup tree (DEBERTA_LENS_MEMORY_ROOT) with the process in a nested v1 or
// v2 cgroup, limits at seeded levels (tight or loose, "max", v1's unlimited, garbage), a tight sibling that must not
// count, and sometimes a container's own mount or no mountinfo. The room the tree allows is computed from the figures
// written (fake-cgroup.ts): a tight one must refuse the input and quote that room; a loose one must run.
import * as path from 'node:path';
import { expectedRoom, type FakeGroup, type FakeTree, GiB, writeFakeTree } from '../fake-cgroup';
import type { Rng } from '../mutate';
import { explainArgs, type Family, literal, V3 } from './family';
import { editFixture } from './weight-edits';

const NAMES = ['user.slice', 'docker', 'kubepods', 'process_api', '0fc517f0e2f3', 'lens job', 'session-3.scope', 'a'];
/** Room at most this must refuse the 12-token input (it needs ~50 kB); at least LOOSE must run it. */
const TIGHT = 8_000;
const LOOSE = 256 * 2 ** 20;

function group(rng: Rng, tight: boolean): FakeGroup {
  if (tight) {
    const limit = rng.pick([4096, 65536, 2 * GiB, 8 * GiB]);
    const room = rng.int(TIGHT);
    const inactive = rng.chance(0.3) ? rng.int(room + 1) : 0;
    return { limit: String(limit), usage: String(Math.max(0, limit - room + inactive)), inactive };
  }
  switch (rng.int(6)) {
    case 0:
      return {};
    case 1:
      return { limit: 'max', usage: String(rng.int(GiB)) };
    case 2:
      return { limit: '9223372036854771712', usage: String(rng.int(GiB)) };
    case 3:
      return { limit: rng.pick(['lots', '-1', '', '1e9', '12.5']), usage: '0' };
    default: {
      const limit = rng.pick([1, 4, 64]) * GiB;
      return { limit: String(limit), usage: String(rng.int(limit - 2 * LOOSE)), inactive: rng.chance(0.3) ? rng.int(LOOSE) : undefined };
    }
  }
}

function tree(rng: Rng): FakeTree {
  const version = rng.chance(0.5) ? 2 : 1;
  const depth = rng.int(5);
  const parts = Array.from({ length: depth }, () => rng.pick(NAMES));
  const cgroupPath = `/${parts.join('/')}`;
  const mountinfo = rng.chance(0.85);
  // A container mounting its own cgroup as the top shows the first k levels as "/".
  const k = mountinfo && depth > 0 && rng.chance(0.3) ? 1 + rng.int(depth) : 0;
  const mountRoot = k === 0 ? '/' : `/${parts.slice(0, k).join('/')}`;
  const mountPoint = version === 1 ? '/sys/fs/cgroup/memory' : mountinfo && rng.chance(0.3) ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';
  const below = parts.slice(k);
  const levels = ['', ...below.map((_, i) => below.slice(0, i + 1).join('/'))];
  const tightAt = rng.chance(0.5) ? rng.int(levels.length) : -1;
  const groups: Record<string, FakeGroup> = {};
  levels.forEach((where, i) => (groups[where] = group(rng, i === tightAt)));
  // A tight sibling of the process's cgroup: another job's limit, not ours.
  if (below.length > 0 && rng.chance(0.5)) groups[[...below.slice(0, -1), 'sibling'].join('/')] = group(rng, true);
  // No MemAvailable line at times (os.freemem() stands in), and at times a host with no room itself.
  const memAvailable = rng.chance(0.2)
    ? undefined
    : rng.pick([2 * GiB, 60 * GiB, tightAt < 0 && rng.chance(0.2) ? rng.int(TIGHT) : 8 * GiB]);
  return { memAvailable, version, cgroupPath, mountPoint, mountRoot, mountinfo, groups };
}

export const cgroupLimits: Family = {
  name: 'cgroup limits',
  make({ rng, dir, cache }) {
    const t = tree(rng);
    const root = writeFakeTree(path.join(dir, 'root'), t);
    const room = expectedRoom(t);
    const ids = editFixture().input_ids.join(',');
    const what = `v${t.version} ${t.cgroupPath} (mount ${t.mountRoot} at ${t.mountPoint}${t.mountinfo ? '' : ', no mountinfo'}): room ${room}`;
    const base = { what, args: explainArgs(V3, cache, '--ids', ids), env: { DEBERTA_LENS_MEMORY_ROOT: root } };
    if (room <= TIGHT) return { ...base, expect: 'error', names: new RegExp(`and ${literal((room / 1e3).toFixed(1))} kB is free`) };
    if (room >= LOOSE) return { ...base, expect: 'result' };
    throw new Error(`cgroup tree with a room of ${room} between the tight and loose bounds: ${what}`);
  },
};
