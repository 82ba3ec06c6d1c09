// Bundles the extension host, the CLI, the runtime worker, the tokenizer thread and the webview.
// onnxruntime-node stays external: it loads native binaries relative to its own package folder.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

const node = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode', 'onnxruntime-node'],
};

const builds = [
  { ...node, entryPoints: { extension: 'src/extension/extension.ts' } },
  { ...node, entryPoints: { cli: 'src/cli.ts' }, banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: { 'runtime-worker': 'src/engine/runtime/worker.ts' } },
  { ...node, entryPoints: { 'tokenizer-thread': 'src/engine/tokenizer-thread/thread.ts' } },
  { ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: { webview: 'webview/main.ts' } },
].filter((b) => Object.values(b.entryPoints).every((f) => fs.existsSync(f)));

for (const b of builds) {
  const options = { ...b, outdir: 'dist' };
  if (watch) await (await esbuild.context(options)).watch();
  else await esbuild.build(options);
}
if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
