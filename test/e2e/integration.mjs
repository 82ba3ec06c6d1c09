// Runs the extension's mocha integration suite (out/test/suite/index.js) inside code-server's Node extension
// host, with the real `vscode` API. code-server refuses --extensionDevelopmentPath on its command line, so the
// dev/test paths go in the workbench's `payload` URL parameter; the page calls window.codeAutomationExit(code)
// when the suite ends. Exit code: the suite's (0 = all passed); 2 = harness failure or timeout.
//
//   node test/e2e/integration.mjs [--timeout-ms 300000]
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import { launchBrowser, openWorkbench } from './lib/browser.mjs';
import { startCodeServer } from './lib/code-server.mjs';
import { REPO_ROOT } from './lib/paths.mjs';
import { screenshot } from './lib/workbench.mjs';

const argTimeout = process.argv.indexOf('--timeout-ms');
const timeoutMs = argTimeout > 0 ? Number(process.argv[argTimeout + 1]) : 300_000;
const suite = path.join(REPO_ROOT, 'out', 'test', 'suite', 'index.js');
const main = path.join(REPO_ROOT, 'dist', 'extension.js');

function fail(message) {
  console.error(`[integration] error: ${message}`);
  process.exit(2);
}
if (!fs.existsSync(suite)) fail(`${path.relative(REPO_ROOT, suite)} missing: compile the integration suite first (npx tsc -p .)`);
if (!fs.existsSync(main)) fail(`${path.relative(REPO_ROOT, main)} missing: build the extension first (npm run build)`);

// Workbench chatter that shares the forwarded console (offline marketplace lookups, timing notes).
const NOISE =
  /^\s+at |ENOTFOUND|^Creation of workbench contribution|^ChatSessionStore|Resolv(ing|ed) connection token|Creating a socket|builtin extensions cache|\[Service Worker\]/;

let server,
  browser,
  code = 2;
const t0 = Date.now();
try {
  server = await startCodeServer({ name: 'integration', files: { 'README.txt': 'DeBERTa Lens integration workspace\n' } });
  browser = await launchBrowser();
  let exitWith;
  const exited = new Promise((r) => {
    exitWith = r;
  });
  const { page } = await openWorkbench(browser, server, {
    name: 'integration',
    payload: { extensionDevelopmentPath: REPO_ROOT, extensionTestsPath: suite },
    // Must exist before the workbench loads: it calls this when the extension tests finish.
    beforeGoto: (p) =>
      p.exposeFunction('codeAutomationExit', (c) => {
        exitWith(Number(c));
      }),
  });
  // The extension host's console (mocha's reporter) is forwarded to the page console as
  // ('%c LEVEL', 'color: …', format, ...args); print it formatted, in order.
  let printing = Promise.resolve();
  page.on('console', (m) => {
    printing = printing.then(async () => {
      const args = await Promise.all(m.args().map((a) => a.jsonValue().catch(() => '?')));
      const level = typeof args[0] === 'string' && args[0].startsWith('%c') ? args.splice(0, 2)[0].slice(2).trim() : '';
      if (!level) return; // workbench noise, still in test-results/e2e/integration-console.log
      const line = util.format(...args);
      if (line.trim() && !NOISE.test(line)) console.log(line);
    });
  });
  const timer = new Promise((r) => setTimeout(r, timeoutMs, 'timeout'));
  const result = await Promise.race([exited, timer]);
  await printing;
  await screenshot(page, 'integration-end').catch(() => {});
  if (result === 'timeout') {
    console.error(`[integration] error: the suite did not finish within ${timeoutMs} ms (see test-results/e2e/integration-*.log)`);
  } else {
    code = result;
    console.log(`[integration] suite finished with exit code ${code} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
} catch (e) {
  console.error(`[integration] error: ${e.message}`);
} finally {
  await browser?.close().catch(() => {});
  await server?.stop().catch(() => {});
}
process.exit(code);
