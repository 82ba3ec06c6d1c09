// Issue 26's finding on the length check: it read /proc/meminfo (the host's figure) and not the container's cgroup
// limit. The figures are read under a root folder, so each layout (v1, v2, nested cgroups, a container's own
// mount) is tested on a fake tree on any machine.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { availableMemory } from '../../src/engine/memory/available-memory';
import { cgroupFolders } from '../../src/engine/memory/cgroup-folders';
import { tempDir } from './checkpoint-test-utils';
import { expectedRoom, type FakeTree, GiB, writeFakeTree } from './fuzz/fake-cgroup';

const HOST = 60 * GiB; // MemAvailable on the host

function v2(groups: FakeTree['groups'], more: Partial<FakeTree> = {}): FakeTree {
  return { memAvailable: HOST, version: 2, cgroupPath: '/', mountPoint: '/sys/fs/cgroup', mountRoot: '/', groups, ...more };
}
function v1(groups: FakeTree['groups'], more: Partial<FakeTree> = {}): FakeTree {
  return { memAvailable: HOST, version: 1, cgroupPath: '/', mountPoint: '/sys/fs/cgroup/memory', mountRoot: '/', groups, ...more };
}

/** availableMemory on the tree, checked against the figure the tree's own numbers give. */
function room(tree: FakeTree): number {
  const got = availableMemory(writeFakeTree(tempDir('mem'), tree));
  assert.equal(got, expectedRoom(tree), 'the fake tree and the check agree');
  return got;
}

test('hardening: a cgroup v2 limit below the host figure wins; "max" means none', () => {
  assert.equal(room(v2({})), HOST);
  assert.equal(room(v2({ '': { limit: `${4 * GiB}`, usage: `${GiB}` } })), 3 * GiB);
  assert.equal(room(v2({ '': { limit: 'max', usage: `${GiB}` } })), HOST);
  // Page cache the kernel drops first (a checkpoint just read) is room, not usage.
  assert.equal(room(v2({ '': { limit: `${4 * GiB}`, usage: `${4 * GiB}`, inactive: 2 * GiB } })), 2 * GiB);
  // Over the limit: no room, never negative.
  assert.equal(room(v2({ '': { limit: `${GiB}`, usage: `${2 * GiB}` } })), 0);
});

test('hardening: a cgroup v1 limit counts too; its "unlimited" value does not', () => {
  assert.equal(room(v1({ '': { limit: `${8 * GiB}`, usage: `${2 * GiB}` } })), 6 * GiB);
  assert.equal(room(v1({ '': { limit: '9223372036854771712', usage: `${2 * GiB}` } })), HOST);
  assert.equal(room(v1({ '': { limit: `${8 * GiB}`, usage: `${8 * GiB}`, inactive: GiB } })), GiB);
});

test('hardening: the host figure still wins when it is the smaller; garbage in a cgroup file is ignored', () => {
  assert.equal(room(v2({ '': { limit: `${4 * GiB}`, usage: '0' } }, { memAvailable: GiB })), GiB);
  assert.equal(room(v2({ '': { limit: 'lots', usage: '0' } })), HOST);
  assert.equal(room(v2({ '': { limit: `${2 * GiB}`, usage: '-5' } })), 2 * GiB);
});

test('hardening: a nested v2 cgroup from /proc/self/cgroup: its own limit and every ancestor count', () => {
  const groups = {
    '': {},
    'user.slice': { limit: `${16 * GiB}`, usage: `${10 * GiB}` },
    'user.slice/job': { limit: `${8 * GiB}`, usage: `${GiB}` },
    'user.slice/job/lens': { limit: 'max', usage: `${GiB}` },
  };
  // The parent's room (6 GiB) is smaller than the job's (7 GiB): a sibling's use counts against the process too.
  assert.equal(room(v2(groups, { cgroupPath: '/user.slice/job/lens' })), 6 * GiB);
  // Only the process's own branch counts: a tight sibling does not.
  const sibling = { ...groups, 'user.slice/other': { limit: `${GiB}`, usage: '0' } };
  assert.equal(room(v2(sibling, { cgroupPath: '/user.slice/job/lens' })), 6 * GiB);
  // The leaf's own limit, the tightest.
  const leaf = { ...groups, 'user.slice/job/lens': { limit: `${3 * GiB}`, usage: `${GiB}`, inactive: GiB } };
  assert.equal(room(v2(leaf, { cgroupPath: '/user.slice/job/lens' })), 3 * GiB);
});

test('hardening: a nested v1 memory cgroup (hybrid host: the memory line among other controllers)', () => {
  const groups = { '': { limit: '9223372036854771712' }, process_api: {}, 'process_api/0fc5': { limit: `${3 * GiB}`, usage: `${GiB}` } };
  assert.equal(room(v1(groups, { cgroupPath: '/process_api/0fc5' })), 2 * GiB);
});

test("hardening: a container that mounts its own cgroup as the top: the path is read relative to the mount's root", () => {
  // /proc/self/cgroup names /docker/abc/app; the mount shows /docker/abc at /sys/fs/cgroup.
  const groups = { '': { limit: `${4 * GiB}`, usage: `${GiB}` }, app: { limit: `${2 * GiB}`, usage: `${GiB}` } };
  assert.equal(room(v2(groups, { cgroupPath: '/docker/abc/app', mountRoot: '/docker/abc' })), GiB);
  // With a cgroup namespace the path reads "/" and the top is the container's own cgroup.
  assert.equal(room(v2({ '': { limit: `${4 * GiB}`, usage: `${GiB}` } }, { cgroupPath: '/', mountRoot: '/docker/abc' })), 3 * GiB);
  // A path outside what the mount shows falls back to the top.
  assert.equal(room(v2({ '': { limit: `${5 * GiB}`, usage: '0' } }, { cgroupPath: '/elsewhere/x', mountRoot: '/docker/abc' })), 5 * GiB);
});

test('hardening: without mountinfo the usual mount places are used; mount points with spaces are unescaped', () => {
  const groups = { '': {}, 'a b': { limit: `${2 * GiB}`, usage: '0' } };
  assert.equal(room(v2(groups, { cgroupPath: '/a b', mountinfo: false })), 2 * GiB);
  const odd = { '': {}, 'x/y': { limit: `${GiB}`, usage: '0' } };
  assert.equal(room(v2(odd, { cgroupPath: '/x/y', mountPoint: '/mnt/cg roups' })), GiB);
});

test('hardening: the folders walked are the own cgroup first, then each ancestor to the top, and no more', () => {
  const root = writeFakeTree(tempDir('mem'), v2({ 'a/b/c': {} }, { cgroupPath: '/a/b/c' }));
  const dirs = cgroupFolders(root).map((f) => path.relative(root, f.dir));
  assert.deepEqual(dirs, ['sys/fs/cgroup/a/b/c', 'sys/fs/cgroup/a/b', 'sys/fs/cgroup/a', 'sys/fs/cgroup']);
  // ".." in a path never climbs out of the mount.
  fs.writeFileSync(path.join(root, 'proc/self/cgroup'), '0::/../../etc\n');
  assert.ok(cgroupFolders(root).every((f) => f.dir.startsWith(path.join(root, 'sys/fs/cgroup'))));
});

test('hardening: on this machine the figure is a positive number of bytes', () => {
  const got = availableMemory();
  assert.ok(Number.isSafeInteger(got) && got > 0, String(got));
});
