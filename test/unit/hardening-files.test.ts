// Issue 26's fuzz findings on a model folder's small files: non-regular files (devices, FIFOs, folders) refused by
// name before reading, size caps, a hub refs/main that names a path, JSON errors that never quote the file, and
// numbers that overflow a double reported as written.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { jsonFaultOffset } from '../../src/engine/checkpoint/json-fault';
import { parseJsonText } from '../../src/engine/checkpoint/json-file';
import { makeDirs } from '../../src/engine/checkpoint/make-dirs';
import { LensError } from '../../src/engine/errors';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { copyFixture, hubSnapshot, rejectsLens, tempDir, TINY } from './checkpoint-test-utils';

/**
 * Loads `dir` with `fn` ('loadCheckpoint' or 'loadTokenizer') in a child process with a deadline: an open that
 * blocks (a FIFO) would stop this process's event loop for good. Returns "name: message" of what it threw.
 */
function failureInChild(fn: 'loadCheckpoint' | 'loadTokenizer', dir: string): string {
  const mod = path.join(__dirname, '..', '..', 'src', 'engine', fn === 'loadCheckpoint' ? 'checkpoint' : 'tokenizer');
  const script = `require(${JSON.stringify(mod)}).${fn}(${JSON.stringify(dir)}, { hash: false })
    .then(() => console.log('loaded'), (e) => console.log(e.name + ': ' + e.code + ': ' + e.message));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.signal, null, `${fn} of ${dir} still blocked after 10 s`);
  return r.stdout.trim();
}

test('hardening: config.json symlinked to /dev/zero, a FIFO or a folder is refused by name', async () => {
  for (const kind of ['device', 'fifo', 'folder'] as const) {
    const dir = copyFixture('v3', `cfg-${kind}`);
    const cfg = path.join(dir, 'config.json');
    fs.rmSync(cfg);
    if (kind === 'device') fs.symlinkSync('/dev/zero', cfg);
    else if (kind === 'fifo') execFileSync('mkfifo', [cfg]);
    else fs.mkdirSync(cfg);
    const said = { device: 'is a device', fifo: 'is a named pipe', folder: 'is a folder' }[kind];
    const got = failureInChild('loadCheckpoint', dir);
    assert.ok(got.startsWith(`LensError: invalid-input: ${cfg}: config.json ${said}`), got);
  }
});

test('hardening: a shard index or weight file that is a device or a folder is refused by name', async () => {
  const dir = copyFixture('v3', 'index-dev', false);
  fs.symlinkSync('/dev/zero', path.join(dir, 'model.safetensors.index.json'));
  await rejectsLens(() => loadCheckpoint(dir, { hash: false }), 'invalid-input', 'model.safetensors.index.json', 'is a device');
  const dir2 = copyFixture('v3', 'weights-dir', false);
  fs.mkdirSync(path.join(dir2, 'model.safetensors'));
  await rejectsLens(() => loadCheckpoint(dir2, { hash: false }), 'invalid-input', 'model.safetensors', 'is a folder');
  const dir3 = copyFixture('v3', 'weights-dev', false);
  fs.symlinkSync('/dev/zero', path.join(dir3, 'pytorch_model.bin'));
  await rejectsLens(() => loadCheckpoint(dir3, { hash: false }), 'invalid-input', 'pytorch_model.bin', 'is a device');
});

test('hardening: tokenizer files symlinked to /dev/zero or a FIFO are refused by name; oversized JSON is capped', async () => {
  for (const name of ['tokenizer_config.json', 'special_tokens_map.json', 'spm.model']) {
    const dir = tempDir('tok-dev');
    fs.copyFileSync(path.join(TINY('v3'), 'spm.model'), path.join(dir, 'spm.model'));
    fs.rmSync(path.join(dir, name), { force: true });
    fs.symlinkSync('/dev/zero', path.join(dir, name));
    await rejectsLens(() => loadTokenizer(dir), 'invalid-input', name, 'is a device');
  }
  const fifo = tempDir('tok-fifo');
  fs.copyFileSync(path.join(TINY('v3'), 'spm.model'), path.join(fifo, 'spm.model'));
  execFileSync('mkfifo', [path.join(fifo, 'tokenizer_config.json')]);
  const got = failureInChild('loadTokenizer', fifo);
  assert.match(got, /^LensError: invalid-input: .*tokenizer_config\.json: tokenizer_config\.json is a named pipe/);
  const big = tempDir('tok-big');
  fs.copyFileSync(path.join(TINY('v3'), 'spm.model'), path.join(big, 'spm.model'));
  fs.writeFileSync(path.join(big, 'tokenizer_config.json'), `{"x": "${'a'.repeat(17 * 2 ** 20)}"}`);
  await rejectsLens(() => loadTokenizer(big), 'corrupt', 'tokenizer_config.json', 'over the limit of 16777216');
});

test('hardening: a hub refs/main naming ../../victim is refused, never followed out of the repo folder', async () => {
  const root = tempDir('hub-ref');
  const snap = hubSnapshot(root, ['config.json', 'model.safetensors']);
  const repo = path.dirname(path.dirname(snap));
  // A complete model folder outside the repo, which the ref tries to reach.
  const victim = path.join(root, 'victim');
  fs.mkdirSync(victim);
  for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(TINY('v3'), f), path.join(victim, f));
  fs.writeFileSync(path.join(repo, 'refs', 'main'), '../../victim\n');
  await rejectsLens(() => loadCheckpoint(repo, { hash: false }), 'corrupt', path.join(repo, 'refs', 'main'), 'not a plain commit hash');
  fs.writeFileSync(path.join(repo, 'refs', 'main'), '0123abcd\n');
  assert.equal((await loadCheckpoint(repo, { hash: false })).dir, snap);
});

test('hardening: a JSON error names the position, never the content (a config symlinked to a secret)', async () => {
  const dir = copyFixture('v3', 'cfg-secret');
  const secret = path.join(tempDir('secret'), 'id_token');
  fs.writeFileSync(secret, 'hunter2-SECRET-TOKEN-0123456789\n');
  fs.rmSync(path.join(dir, 'config.json'));
  fs.symlinkSync(secret, path.join(dir, 'config.json'));
  let message = '';
  await loadCheckpoint(dir, { hash: false }).catch((e: Error) => (message = e.message));
  assert.match(message, /config\.json is not valid JSON \(line 1, column 1\)/);
  for (const piece of ['hunter', 'SECRET', 'TOKEN', '0123']) assert.ok(!message.includes(piece), message);
  // The same for tokenizer files.
  const tok = tempDir('tok-secret');
  fs.copyFileSync(path.join(TINY('v3'), 'spm.model'), path.join(tok, 'spm.model'));
  fs.symlinkSync(secret, path.join(tok, 'tokenizer_config.json'));
  await loadTokenizer(tok).catch((e: Error) => (message = e.message));
  assert.match(message, /tokenizer_config\.json .*not valid JSON \(line 1, column 1\)/);
  assert.ok(!message.includes('hunter'), message);
});

test('hardening: JSON faults are located by line and column', () => {
  const where = (t: string) => {
    try {
      parseJsonText(t, (w) => new LensError(w));
      return 'ok';
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.equal(where('{"a": 1,\n  "b": nope}'), 'line 2, column 8');
  assert.equal(where('{"a": [1, 2,]}'), 'line 1, column 13');
  assert.equal(where('{"a": '), 'it ends too early');
  assert.equal(where('{} x'), 'line 1, column 4');
  assert.equal(where('[{"a": [true, false, null, -1.5e3, "\\u00e9"]}]'), 'ok');
  assert.equal(jsonFaultOffset('['.repeat(100_000)), 100_000);
});

test('hardening: 1e999 in config.json is reported as written, not as "got null"', async () => {
  const dir = copyFixture('v3', 'cfg-inf');
  const cfg = path.join(dir, 'config.json');
  const text = fs.readFileSync(cfg, 'utf8').replace(/"num_hidden_layers":\s*\d+/, '"num_hidden_layers": 1e999');
  assert.match(text, /1e999/);
  fs.writeFileSync(cfg, text);
  await rejectsLens(() => loadCheckpoint(dir, { hash: false }), 'invalid-input', 'num_hidden_layers must be', 'got 1e999');
});

test('hardening: makeDirs creates parents, and under /proc fails at once instead of looping', () => {
  const root = tempDir('mkdirs');
  makeDirs(path.join(root, 'a', 'b', 'c'));
  assert.ok(fs.statSync(path.join(root, 'a', 'b', 'c')).isDirectory());
  makeDirs(path.join(root, 'a', 'b')); // existing: nothing to do
  if (fs.existsSync('/proc/self')) assert.throws(() => makeDirs('/proc/lens-x/graphs'), { code: 'ENOENT' });
});
