// Bundles the extension host, the CLI, the runtime worker, the tokenizer and atlas threads, the load process, the webviews
// and the HTML
// report's script.
// onnxruntime-node stays external: it loads native binaries relative to its own package folder.
//   node esbuild.mjs [--production]   one build
//   node esbuild.mjs --watch          rebuild all bundles together on every change (npm run watch, F5)
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: watch ? 'silent' : 'warning', metafile: watch };

const node = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode', 'onnxruntime-node'],
};

const builds = [
  { ...node, entryPoints: { extension: 'src/extension/extension.ts' } },
  { ...node, entryPoints: { cli: 'src/cli/main.ts' }, banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: { 'runtime-worker': 'src/engine/runtime/worker.ts' } },
  { ...node, entryPoints: { 'tokenizer-thread': 'src/engine/tokenizer-thread/thread.ts' } },
  { ...node, entryPoints: { 'load-process': 'src/engine/model/load-process.ts' } },
  { ...node, entryPoints: { 'atlas-thread': 'src/analysis/atlas/atlas-thread.ts' } },
  { ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: { webview: 'webview/lens/main.ts' } },
  { ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: { compare: 'webview/compare/main.ts' } },
  { ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: { atlas: 'webview/atlas/main.ts' } },
  // The HTML report's script, inlined into each exported page (which opens in any browser, offline): no source
  // map to point at, and older syntax.
  { ...common, sourcemap: false, platform: 'browser', target: 'es2017', format: 'iife', entryPoints: { report: 'webview/report/main.ts' } },
].filter((b) => Object.values(b.entryPoints).every((f) => fs.existsSync(f)));

if (watch) {
  await watchAll(await Promise.all(builds.map((b) => esbuild.context({ ...b, outdir: 'dist' }))));
} else {
  for (const b of builds) await esbuild.build({ ...b, outdir: 'dist' });
  if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
}

/**
 * Watch mode. esbuild's own ctx.watch() polls each bundle on its own schedule, so one edit to a file that several
 * bundles import is reported as several builds, each of which would reset the editor's problem list. Here one
 * watcher over the folders of every bundled source rebuilds all bundles together and reports each round as one
 * span: `[watch] build started`, each problem once as `✘ [ERROR] text` + `    file:line:column:`, then
 * `[watch] build finished` — the lines the background problem matcher in .vscode/tasks.json reads.
 */
async function watchAll(contexts) {
  const watchers = new Map();
  let timer;
  let building = false;
  let again = false;
  const round = async () => {
    if (building) return void (again = true);
    building = true;
    console.log('[watch] build started');
    const settled = await Promise.allSettled(contexts.map((c) => c.rebuild()));
    const seen = new Set();
    const inputs = new Set();
    for (const s of settled) {
      const r = s.status === 'fulfilled' ? s.value : s.reason;
      for (const f of Object.keys(r?.metafile?.inputs ?? {})) inputs.add(f);
      for (const [kind, list] of [
        ['ERROR', r?.errors ?? [s.reason]],
        ['WARNING', r?.warnings ?? []],
      ]) {
        for (const m of list) {
          const where = m?.location ? `    ${m.location.file}:${m.location.line}:${m.location.column + 1}:` : '';
          const line = `✘ [${kind}] ${m?.text ?? String(m)}\n${where}`;
          if (!seen.has(line)) console.error((seen.add(line), line.trimEnd()));
        }
      }
    }
    if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
    // Watch the folders the bundles read (a failed build keeps the folders of the last good one).
    for (const dir of new Set([...inputs].filter((f) => !f.includes('node_modules')).map((f) => path.dirname(f)))) {
      if (!watchers.has(dir) && fs.existsSync(dir)) watchers.set(dir, fs.watch(dir, schedule));
    }
    console.log(`[watch] build finished ${new Date().toLocaleTimeString()}`);
    building = false;
    if (again) {
      again = false;
      schedule();
    }
  };
  // Editors save in bursts (write, rename, chmod): wait for the burst to end.
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(round, 60);
  }
  await round();
}
