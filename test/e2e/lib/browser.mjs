// Launches Debian's Chromium through playwright-core and opens the code-server workbench.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { E2EError } from './errors.mjs';
import { CHROMIUM, RESULTS_DIR, TOOLS_MODULES } from './paths.mjs';

// playwright-core lives in test/e2e/code-server/node_modules, not in the extension's node_modules.
const require = createRequire(path.join(TOOLS_MODULES, 'noop.js'));

export function loadPlaywright() {
  try {
    return require('playwright-core');
  } catch {
    throw new E2EError('playwright-core is not installed in test/e2e/code-server: run tools/e2e-setup.sh as root');
  }
}

export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) throw new E2EError(`${CHROMIUM} missing: run tools/e2e-setup.sh (apt-get install chromium)`);
  const { chromium } = loadPlaywright();
  return chromium.launch({
    executablePath: CHROMIUM,
    // No --user-data-dir here: Playwright rejects it and makes a fresh profile anyway.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
    timeout: 60_000,
  });
}

/** Collects the page's console and errors into test-results/e2e/<name>-console.log (and an array). */
export function recordConsole(page, name) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const lines = [];
  const out = fs.createWriteStream(path.join(RESULTS_DIR, `${name}-console.log`));
  page.on('console', (m) => {
    const l = `[${m.type()}] ${m.text()}`;
    lines.push(l);
    out.write(l + '\n');
  });
  page.on('pageerror', (e) => {
    const l = `[pageerror] ${e.message}`;
    lines.push(l);
    out.write(l + '\n');
  });
  return lines;
}

/**
 * Builds the workbench URL. `payload` entries are VS Code's own dev/test switches
 * (extensionDevelopmentPath, extensionTestsPath …); code-server refuses them on its command line but
 * the workbench reads them from this URL parameter. Paths become vscode-remote URIs on this server.
 */
export function workbenchUrl(server, { payload } = {}) {
  let url = `${server.url}/?folder=${encodeURIComponent(server.dirs.workspace)}`;
  if (payload) {
    const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
    const entries = Object.entries(payload).map(([k, v]) => [k, k.endsWith('Path') ? remote(v) : String(v)]);
    url += `&payload=${encodeURIComponent(JSON.stringify([...entries, ['skipWelcome', 'true']]))}`;
  }
  return url;
}

/** Opens a new page on the workbench and waits until it is interactive. */
export async function openWorkbench(
  browser,
  server,
  { name = 'workbench', payload, viewport = { width: 1600, height: 1000 }, beforeGoto } = {},
) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const consoleLines = recordConsole(page, name);
  if (beforeGoto) await beforeGoto(page);
  await page.goto(workbenchUrl(server, { payload }), { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  // The explorer shows the folder once the remote connection and file service are up.
  await page.waitForSelector('.explorer-folders-view, .monaco-workbench .part.sidebar', { timeout: 60_000 });
  return { context, page, consoleLines };
}
