#!/usr/bin/env node
// npm run package [-- --target linux-x64,win32-x64] [--skip-build] [--smoke] [--out DIR]
//
// Builds the production bundles once, then one VSIX per platform target with `vsce package --target`, each
// carrying only that platform's onnxruntime-node binaries. The file selection lives in
// tools/package/select-files.ts (compiled here on the fly with esbuild, so packaging does not depend on the
// whole project type-checking); every VSIX is checked against it afterwards. `--smoke` unpacks the VSIX for the
// machine it runs on and explains "hello world" with the packaged CLI, runtime child process and bundled model.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-package-'));

class PackageError extends Error {}

/** Stops packaging with one line on stderr (temp files still cleaned up). */
function fail(message) {
  throw new PackageError(message);
}

function parseArgs(argv) {
  const args = { targets: null, skipBuild: false, smoke: false, out: path.join(ROOT, 'vsix') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--target') args.targets = value().split(',').filter(Boolean);
    else if (a === '--out') args.out = path.resolve(value());
    else if (a === '--skip-build') args.skipBuild = true;
    else if (a === '--smoke') args.smoke = true;
    else fail(`unknown flag ${a}: use --target T[,T] --out DIR --skip-build --smoke`);
  }
  return args;
}

/** Compiles the TS helpers into one ESM file and imports it. */
async function loadHelpers() {
  const outfile = path.join(TMP, 'package-helpers.mjs');
  await esbuild.build({
    stdin: {
      contents: "export * from './tools/package/select-files.ts'; export * from './tools/package/zip-reader.ts';",
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  return import(pathToFileURL(outfile).href);
}

function findVsce() {
  const candidates = [process.env.VSCE, path.join(ROOT, 'test/e2e/code-server/node_modules/@vscode/vsce/vsce')];
  const found = candidates.find((c) => c && fs.existsSync(c));
  if (!found) {
    fail('vsce not found: run tools/e2e-setup.sh (installs @vscode/vsce 4.1.0 into test/e2e/code-server) or set VSCE=/path/to/vsce');
  }
  return found;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', ...opts });
  if (r.status !== 0) fail(`${path.basename(cmd)} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  return r;
}

function mib(bytes) {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** The VSIX must hold exactly the selection (under extension/, as vsce names it) plus vsce's two manifests. */
function checkContents(h, vsix, expected) {
  const entries = h
    .listZip(fs.readFileSync(vsix), vsix)
    .map((e) => e.name)
    .filter((n) => !n.endsWith('/'));
  const want = new Set(['extension.vsixmanifest', '[Content_Types].xml', ...expected.map((f) => h.vsixEntryName(f))]);
  const got = new Set(entries);
  const extra = [...got].filter((n) => !want.has(n));
  const missing = [...want].filter((n) => !got.has(n));
  if (extra.length || missing.length) {
    fail(
      `${path.basename(vsix)} differs from tools/package/select-files.ts: ` +
        `unexpected [${extra.slice(0, 10).join(', ')}] missing [${missing.slice(0, 10).join(', ')}]: fix .vscodeignore or the selection`,
    );
  }
  return entries.length;
}

/** Unpacks the VSIX and runs the packaged CLI on the bundled model (needs the VSIX of this very platform). */
function smoke(h, vsix) {
  const dir = path.join(TMP, 'smoke');
  h.extractZip(vsix, dir);
  const cli = path.join(dir, 'extension', 'dist', 'cli.js');
  const r = spawnSync(process.execPath, [cli, 'explain', '--model', 'default', '--text', 'hello world', '--layers', '0'], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
    timeout: 120_000,
    env: { ...process.env, NODE_PATH: '' },
  });
  if (r.status !== 0)
    fail(`smoke run of ${path.basename(vsix)} failed (exit ${r.status ?? r.signal}): ${(r.stderr || '').trim().split('\n').pop()}`);
  const out = JSON.parse(r.stdout);
  const layer = out.layers?.[0];
  const n = out.input_ids?.length ?? 0;
  if (!layer || !Array.isArray(layer.probs) || layer.probs[0]?.length !== n || !out.model?.path?.startsWith(dir)) {
    fail(`smoke run of ${path.basename(vsix)} printed unexpected JSON (model path ${out.model?.path}, ${n} ids)`);
  }
  const rowSum = layer.probs[0][0].reduce((a, b) => a + b, 0);
  if (Math.abs(rowSum - 1) > 1e-4) fail(`smoke run of ${path.basename(vsix)}: probs row sums to ${rowSum}, not 1`);
  console.log(
    `  smoke: packaged CLI explained ${n} tokens with ${out.model.execution_provider} from ${path.relative(dir, out.model.path)}`,
  );
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const h = await loadHelpers();
  const targets = (args.targets ?? h.TARGET_NAMES).map((t) => h.parseTarget(t));
  const vsce = findVsce();
  if (!args.skipBuild) run(process.execPath, ['esbuild.mjs', '--production']);
  const stale = fs
    .readdirSync(path.join(ROOT, 'dist'))
    .filter((f) => f.endsWith('.js') && fs.readFileSync(path.join(ROOT, 'dist', f), 'utf8').includes('sourceMappingURL'));
  if (stale.length)
    fail(`dist/${stale[0]} is a development build (has a source map): drop --skip-build or run 'node esbuild.mjs --production'`);

  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  const baseIgnore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8');
  fs.mkdirSync(args.out, { recursive: true });
  const here = `${process.platform}-${process.arch}`;
  const sizes = [];
  for (const target of targets) {
    const files = h.filesForTarget(target, ROOT, baseIgnore);
    const ignoreFile = path.join(TMP, `${target}.vscodeignore`);
    fs.writeFileSync(ignoreFile, h.ignoreTextForTarget(baseIgnore, target));
    const vsix = path.join(args.out, `deberta-lens-${target}-${version}.vsix`);
    fs.rmSync(vsix, { force: true });
    console.log(`packaging ${target} (${files.length} files)`);
    run(process.execPath, [
      vsce,
      'package',
      '--target',
      target,
      '--ignoreFile',
      ignoreFile,
      '--out',
      vsix,
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--dependencies',
      '--no-yarn',
    ]);
    const count = checkContents(h, vsix, files);
    const size = fs.statSync(vsix).size;
    sizes.push({ target, file: path.relative(ROOT, vsix), bytes: size, entries: count });
    console.log(`  ${path.relative(ROOT, vsix)}: ${mib(size)}, ${count} entries, contents match the selection`);
    if (args.smoke && target === here) smoke(h, vsix);
  }
  if (args.smoke && !targets.includes(here)) console.log(`  smoke: skipped, no VSIX built for this machine (${here})`);
  console.log(JSON.stringify({ vsix: sizes }));
}

try {
  await main();
} catch (e) {
  // LensError from the helpers and PackageError are user-facing one-liners; anything else is a bug: show it all
  console.error(e instanceof PackageError || e?.name === 'LensError' ? `package: ${e.message}` : e);
  process.exitCode = 1;
} finally {
  fs.rmSync(TMP, { recursive: true, force: true });
}
