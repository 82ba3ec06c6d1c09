// Issue 26's finding on the length check: it read /proc/meminfo (the host's figure) and not the container's cgroup
// limit. The files are injected, so each layout is tested on any machine.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { availableMemory, type MemoryFiles } from '../../src/engine/memory/available-memory';
import { tempDir } from './checkpoint-test-utils';

const GiB = 2 ** 30;

/** Files under a temp folder holding `contents` (a missing key: the file does not exist). */
function files(contents: Partial<Record<keyof MemoryFiles, string>>): MemoryFiles {
  const dir = tempDir('mem');
  const keys: (keyof MemoryFiles)[] = ['meminfo', 'v2Max', 'v2Current', 'v2Stat', 'v1Limit', 'v1Usage', 'v1Stat'];
  const out = Object.fromEntries(keys.map((k) => [k, path.join(dir, k)])) as unknown as MemoryFiles;
  for (const k of keys) if (contents[k] !== undefined) fs.writeFileSync(out[k], contents[k]);
  return out;
}

const HOST = `MemTotal:       65000000 kB\nMemAvailable:   ${60 * 2 ** 20} kB\n`; // 60 GiB free on the host

test('hardening: a cgroup v2 limit below the host figure wins; "max" means none', () => {
  assert.equal(availableMemory(files({ meminfo: HOST })), 60 * GiB);
  assert.equal(availableMemory(files({ meminfo: HOST, v2Max: `${4 * GiB}\n`, v2Current: `${1 * GiB}\n` })), 3 * GiB);
  assert.equal(availableMemory(files({ meminfo: HOST, v2Max: 'max\n', v2Current: `${1 * GiB}\n` })), 60 * GiB);
  // Page cache the kernel drops first (a checkpoint just read) is room, not usage.
  const cached = files({ meminfo: HOST, v2Max: `${4 * GiB}`, v2Current: `${4 * GiB}`, v2Stat: `anon 1\ninactive_file ${2 * GiB}\n` });
  assert.equal(availableMemory(cached), 2 * GiB);
  // Over the limit: no room, never negative.
  assert.equal(availableMemory(files({ meminfo: HOST, v2Max: `${GiB}`, v2Current: `${2 * GiB}` })), 0);
});

test('hardening: a cgroup v1 limit counts too; its "unlimited" value does not', () => {
  assert.equal(availableMemory(files({ meminfo: HOST, v1Limit: `${8 * GiB}`, v1Usage: `${2 * GiB}` })), 6 * GiB);
  assert.equal(availableMemory(files({ meminfo: HOST, v1Limit: '9223372036854771712', v1Usage: `${2 * GiB}` })), 60 * GiB);
  const both = files({ meminfo: HOST, v1Limit: `${8 * GiB}`, v1Usage: '0', v2Max: `${5 * GiB}`, v2Current: '0' });
  assert.equal(availableMemory(both), 5 * GiB, 'the smaller room wins');
  const v1cache = files({ meminfo: HOST, v1Limit: `${8 * GiB}`, v1Usage: `${8 * GiB}`, v1Stat: `total_inactive_file ${GiB}\n` });
  assert.equal(availableMemory(v1cache), GiB);
});

test('hardening: the host figure still wins when it is the smaller; garbage in a cgroup file is ignored', () => {
  const small = `MemAvailable:   ${2 ** 20} kB\n`; // 1 GiB
  assert.equal(availableMemory(files({ meminfo: small, v2Max: `${4 * GiB}`, v2Current: '0' })), GiB);
  assert.equal(availableMemory(files({ meminfo: HOST, v2Max: 'lots', v2Current: '0' })), 60 * GiB);
});
