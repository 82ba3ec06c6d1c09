// Packaging: what .vscodeignore + tools/package/select-files.ts put into each platform's VSIX (no vsce needed;
// `npm run package` checks the real VSIX against the same selection).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { REPO_ROOT } from './helpers';
import {
  TARGETS,
  TARGET_NAMES,
  filesForTarget,
  globToRegExp,
  ignoreTextForTarget,
  isIncluded,
  parseIgnore,
  parseTarget,
  vsixEntryName,
} from '../../tools/package/select-files';
import { extractZip, listZip } from '../../tools/package/zip-reader';
import { isLensError } from '../../src/engine/errors';

const BASE_IGNORE = fs.readFileSync(path.join(REPO_ROOT, '.vscodeignore'), 'utf8');
const BIN = 'node_modules/onnxruntime-node/bin/napi-v6/';

test('the targets are exactly the platform folders onnxruntime-node ships', () => {
  const shipped: string[] = [];
  for (const platform of fs.readdirSync(path.join(REPO_ROOT, BIN))) {
    for (const arch of fs.readdirSync(path.join(REPO_ROOT, BIN, platform))) shipped.push(`${platform}-${arch}`);
  }
  assert.deepEqual([...TARGET_NAMES].sort(), shipped.sort());
  assert.ok(!TARGET_NAMES.includes('darwin-x64' as never), 'onnxruntime-node 1.30 has no darwin/x64 binaries');
});

test('each target selects its own binaries, none of another platform, and everything the extension runs on', () => {
  for (const target of TARGET_NAMES) {
    const files = filesForTarget(target, REPO_ROOT, BASE_IGNORE);
    const own = `${BIN}${TARGETS[target].dir}/`;
    const bins = files.filter((f) => f.startsWith(BIN));
    assert.deepEqual(bins, TARGETS[target].binaries.map((b) => own + b).sort(), target);
    for (const needed of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/extension.js',
      'dist/cli.js',
      'dist/runtime-worker.js',
      'dist/load-process.js',
      'dist/tokenizer-thread.js',
      'dist/atlas-thread.js',
      'dist/webview.js',
      'dist/compare.js',
      'dist/atlas.js',
      'media/lens.css',
      'media/lens-views.css',
      'media/lens-runs.css',
      'media/lens-decision.css',
      'media/compare.css',
      'media/atlas.css',
      'media/icon.png',
      'models/default/config.json',
      'models/default/model.safetensors',
      'models/default/spm.model',
      'models/bert-twin/config.json',
      'models/bert-twin/model.safetensors',
      'models/bert-twin/spm.model',
      'models/default-pairs/config.json',
      'models/default-pairs/model.safetensors',
      'models/bert-twin-pairs/config.json',
      'models/bert-twin-pairs/model.safetensors',
      'node_modules/onnxruntime-node/package.json',
      'node_modules/onnxruntime-node/dist/index.js',
      'node_modules/onnxruntime-node/dist/binding.js',
      'node_modules/onnxruntime-common/package.json',
      'node_modules/onnxruntime-common/dist/cjs/index.js',
      'node_modules/onnxruntime-common/dist/cjs/package.json',
    ]) {
      assert.ok(files.includes(needed), `${target} lacks ${needed}`);
    }
    // every file the bundled models' folders hold goes in (the tokenizer files differ per model)
    for (const m of ['default', 'bert-twin']) {
      for (const f of fs.readdirSync(path.join(REPO_ROOT, 'models', m))) assert.ok(files.includes(`models/${m}/${f}`), `${m}/${f}`);
    }
  }
});

test('sources, tests, tools, build output, maps and install-only dependencies stay out', () => {
  const files = filesForTarget('linux-x64', REPO_ROOT, BASE_IGNORE);
  const bad = files.filter(
    (f) =>
      /^(src|test|tools|out|bench-results|test-results|webview|samples|\.ci|\.git)\//.test(f) ||
      /\.(map|ts)$/.test(f) ||
      /^node_modules\/(?!onnxruntime-(node|common)\/)/.test(f) ||
      /^node_modules\/onnxruntime-node\/(script|lib)\//.test(f) ||
      ['package-lock.json', 'tsconfig.json', 'esbuild.mjs', '.vscodeignore', '.gitignore'].includes(f),
  );
  assert.deepEqual(bad, []);
  // and the darwin VSIX ships one copy of the 44 MB dylib, the one the binding loads
  const darwin = filesForTarget('darwin-arm64', REPO_ROOT, BASE_IGNORE);
  assert.ok(darwin.includes(`${BIN}darwin/arm64/libonnxruntime.1.dylib`));
  assert.ok(!darwin.includes(`${BIN}darwin/arm64/libonnxruntime.1.30.0.dylib`));
});

test('the plain .vscodeignore (vsce package without the tool) is a universal package with every platform', () => {
  const rules = parseIgnore(BASE_IGNORE);
  for (const target of TARGET_NAMES) {
    for (const b of TARGETS[target].binaries) assert.ok(isIncluded(`${BIN}${TARGETS[target].dir}/${b}`, rules), `${target}/${b}`);
  }
  assert.ok(!isIncluded('src/cli/main.ts', rules));
  assert.ok(!isIncluded('dist/cli.js.map', rules));
  assert.ok(!isIncluded('node_modules/adm-zip/package.json', rules));
  // and the per-target text keeps only that target's binaries
  const linux = parseIgnore(ignoreTextForTarget(BASE_IGNORE, 'linux-x64'));
  assert.ok(isIncluded(`${BIN}linux/x64/libonnxruntime.so.1`, linux));
  assert.ok(!isIncluded(`${BIN}linux/arm64/libonnxruntime.so.1`, linux));
  assert.ok(!isIncluded(`${BIN}win32/x64/onnxruntime.dll`, linux));
});

test('glob matching follows minimatch (dot: true) for the patterns vsce ignore files use', () => {
  const m = (g: string, f: string) => globToRegExp(g).test(f);
  assert.ok(m('**', '.ci/run'));
  assert.ok(m('dist/*.js', 'dist/cli.js'));
  assert.ok(!m('dist/*.js', 'dist/cli.js.map'));
  assert.ok(!m('dist/*.js', 'dist/sub/cli.js'));
  assert.ok(m('media/**', 'media/a/b.css'));
  assert.ok(m('media/**', 'media'));
  assert.ok(!m('media/**', 'mediax/a'));
  assert.ok(m('**/.git/**', 'a/.git/HEAD'));
  assert.ok(m('**/*.vsix', 'x.vsix'));
  assert.ok(m('*.todo', '.todo'));
  assert.ok(!m('*.todo', 'a/b.todo'));
  assert.ok(m('a?c', 'abc'));
  assert.ok(!m('a.c', 'abc'), 'dots are literal');
  // vsce's folder expansion: a bare name also drops everything below it
  assert.ok(!isIncluded('samples/x.md', parseIgnore('samples')));
  assert.ok(isIncluded('samplesx/x.md', parseIgnore('samples')));
  assert.throws(
    () => globToRegExp('{a,b}/**'),
    (e: unknown) => isLensError(e) && /uses glob syntax/.test((e as Error).message),
  );
});

test('vsce renames README, CHANGELOG and LICENSE inside the VSIX', () => {
  assert.equal(vsixEntryName('README.md'), 'extension/readme.md');
  assert.equal(vsixEntryName('CHANGELOG.md'), 'extension/changelog.md');
  assert.equal(vsixEntryName('LICENSE'), 'extension/LICENSE.txt');
  assert.equal(vsixEntryName('dist/cli.js'), 'extension/dist/cli.js');
});

test('bad targets and missing files are one-line LensErrors naming what to do', () => {
  assert.throws(
    () => parseTarget('darwin-x64'),
    (e: unknown) => isLensError(e) && /--target/.test((e as Error).message),
  );
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-pkg-'));
  try {
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ dependencies: { 'onnxruntime-node': '1.30.0' } }));
    assert.throws(
      () => filesForTarget('linux-x64', tmp, BASE_IGNORE),
      (e: unknown) => isLensError(e) && /onnxruntime-node is not installed.*npm ci/.test((e as Error).message),
    );
    fs.mkdirSync(path.join(tmp, 'node_modules/onnxruntime-node'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'node_modules/onnxruntime-node/package.json'), '{"version":"9.9.9"}');
    assert.throws(
      () => filesForTarget('linux-x64', tmp, BASE_IGNORE),
      (e: unknown) => isLensError(e) && /libonnxruntime\.so\.1.*missing for target linux-x64/.test((e as Error).message),
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('the zip reader lists and unpacks stored and deflated entries, and refuses escaping names', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-zip-'));
  try {
    const file = path.join(tmp, 'a.zip');
    fs.writeFileSync(
      file,
      makeZip([
        ['extension/a.txt', 'hello', 0],
        ['extension/dist/b.js', 'x'.repeat(1000), 8],
      ]),
    );
    assert.deepEqual(
      listZip(fs.readFileSync(file)).map((e) => e.name),
      ['extension/a.txt', 'extension/dist/b.js'],
    );
    extractZip(file, path.join(tmp, 'out'));
    assert.equal(fs.readFileSync(path.join(tmp, 'out/extension/a.txt'), 'utf8'), 'hello');
    assert.equal(fs.readFileSync(path.join(tmp, 'out/extension/dist/b.js'), 'utf8'), 'x'.repeat(1000));
    fs.writeFileSync(file, makeZip([['../evil.txt', 'no', 0]]));
    assert.throws(
      () => extractZip(file, path.join(tmp, 'out2')),
      (e: unknown) => isLensError(e) && /outside/.test((e as Error).message),
    );
    assert.throws(
      () => listZip(Buffer.from('not a zip at all, just some bytes')),
      (e: unknown) => isLensError(e),
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

/** A minimal zip writer (local headers + central directory), enough to exercise the reader. */
function makeZip(entries: [string, string, 0 | 8][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text, method] of entries) {
    const data = Buffer.from(text);
    const body = method === 8 ? zlib.deflateRawSync(data) : data;
    const nameBuf = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, body);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}
