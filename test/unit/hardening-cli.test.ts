// Issue 26's fuzz findings on the command line's error paths: each is one line naming the flag or folder, found
// before the model runs where it can be, and a reader that closes stdout early is not an error.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { maxThreads } from '../../src/engine/runtime/threads';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-hcli-'));
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function assertOneLine(r: ReturnType<typeof cli>, pattern: RegExp) {
  assert.equal(r.signal, null, 'it ended by itself');
  assert.notEqual(r.code, 0);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(at(lines, 0), /^deberta-lens: /);
  assert.doesNotMatch(r.stderr, /internal error/);
  assert.match(at(lines, 0), pattern);
}

test('hardening: --threads beyond 4 per core is refused with one line', () => {
  const r = cli('explain', '--model', V3, '--ids', '1,2', '--threads', '100000');
  assertOneLine(r, new RegExp(`--threads 100000 is more than this machine can use: at most ${maxThreads()}`));
  assert.ok(maxThreads() >= 4 && maxThreads() <= 256);
});

test('hardening: --cache-dir under /proc ends with one line naming the folder instead of looping', () => {
  const r = cli('explain', '--model', V3, '--ids', '1,2', '--cache-dir', '/proc/lens-x');
  assertOneLine(r, /cannot write the graph cache in \/proc\/lens-x \(ENOENT\)/);
});

test('hardening: an unwritable --out is refused before the model runs; a write error is one line', () => {
  const missing = path.join(tmp, 'no-such-folder', 'out.json');
  const t0 = Date.now();
  const r = cli('explain', '--model', V3, '--ids', '1,2', '--out', missing, '--cache-dir', path.join(tmp, 'never'));
  assertOneLine(r, /cannot write --out .*no-such-folder\/out\.json \(ENOENT\): its folder does not exist/);
  assert.ok(!fs.existsSync(path.join(tmp, 'never')), 'no graph was built: the check came first');
  assert.ok(Date.now() - t0 < 30_000);
  if (fs.existsSync('/dev/full')) {
    assertOneLine(cli('explain', '--model', V3, '--ids', '1,2', '--out', '/dev/full'), /cannot write --out \/dev\/full \(ENOSPC\)/);
  }
  const existing = path.join(tmp, 'keep.json');
  fs.writeFileSync(existing, 'old');
  assertOneLine(cli('explain', '--model', V3, '--ids', '1,2', '--out', existing, '--format', 'xml'), /--format/);
  assert.equal(fs.readFileSync(existing, 'utf8'), 'old', 'a failed command leaves an existing --out alone');
});

test('hardening: a closed stdout (| head) ends quietly with exit 0', async () => {
  const child = spawn(
    process.execPath,
    [CLI, 'explain', '--model', V3, '--text', 'the quick brown fox jumps over the lazy dog '.repeat(8)],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // Read one chunk, then close the pipe, as `head -c` would.
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});
