// `npm run demo` as a user runs it: tools/demo.mjs prints a URL; that URL shows samples/ with demo.md open and the
// extension loaded from this checkout; Explain on the long paragraph with the bundled model draws the panel;
// Ctrl+C (SIGINT to the terminal's process group) stops code-server and exits 0.
// The picture of that panel is README's screenshot: E2E_UPDATE_DOCS=1 copies it to docs/images/panel.png.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, recordConsole } from './lib/browser.mjs';
import { freePort } from './lib/code-server.mjs';
import { extensionMissing, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { REPO_ROOT } from './lib/paths.mjs';
import { focusEditor, goToLine, runCommand, screenshot, waitForCommand, waitUntil, webviewFrame } from './lib/workbench.mjs';

const DOCS_SHOT = path.join(REPO_ROOT, 'docs', 'images', 'panel.png');
const demoText = fs.readFileSync(path.join(REPO_ROOT, 'samples', 'demo.md'), 'utf8');
// 1-based line of the long paragraph (the Moby-Dick opening, ~270 tokens with the bundled model).
const LONG_LINE = demoText.split('\n').findIndex((l) => l.startsWith('Call me Ishmael')) + 1;
const skip = extensionMissing();

describe('npm run demo', { skip: skip ?? false }, () => {
  let demo,
    output = '',
    exited,
    browser,
    page,
    port;

  before(async () => {
    port = await freePort();
    // Its own process group, as a terminal runs it, so the test can send Ctrl+C's SIGINT to the whole group.
    demo = spawn(process.execPath, [path.join(REPO_ROOT, 'tools', 'demo.mjs'), '--port', String(port)], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (process.env.E2E_PID_FILE) fs.appendFileSync(process.env.E2E_PID_FILE, `${demo.pid}\n`);
    demo.stdout.on('data', (d) => {
      output += d;
    });
    demo.stderr.on('data', (d) => {
      output += d;
    });
    exited = new Promise((resolve) => demo.once('exit', (code, signal) => resolve({ code, signal })));
  });

  after(async () => {
    if (page) await screenshot(page, 'demo-last').catch(() => {});
    await browser?.close().catch(() => {});
    if (demo.exitCode === null && demo.signalCode === null) {
      try {
        process.kill(-demo.pid, 'SIGINT');
      } catch {
        /* gone */
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    }
  });

  test('prints a URL on 127.0.0.1 that opens samples/ with demo.md and the extension loaded', async () => {
    let url;
    await waitUntil(() => (url = /DeBERTa Lens demo: (http:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(output)?.[1]), {
      timeout: 120_000,
      interval: 200,
      message: `the demo URL (output so far:\n${output})`,
    });
    assert.ok(url.startsWith(`http://127.0.0.1:${port}/`), `the asked port: ${url}`);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    recordConsole(page, 'demo');
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.locator('.tab.active[data-resource-name="demo.md"]').waitFor({ timeout: 60_000 });
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'sample.md' }).first().waitFor({ timeout: 10_000 });
    // The file from the URL opens while the workbench is still restoring and can take focus back from a palette
    // opened in that moment (which then closes): focus the editor first, and give the palette a second chance.
    await focusEditor(page);
    await waitForCommand(page, 'DeBERTa Lens: Select Model', { timeout: 30_000 }).catch(() =>
      focusEditor(page).then(() => waitForCommand(page, 'DeBERTa Lens: Select Model', { timeout: 30_000 })),
    );
  });

  test('Explain on the long paragraph draws the panel with the bundled model (README screenshot)', async () => {
    assert.ok(page, 'the workbench is open');
    await goToLine(page, LONG_LINE, 10);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    const frame = webviewFrame(page);
    // The bundled model's first run builds its graph in a fresh cache on a shared 2-core machine.
    await waitReady(frame, 180_000);
    await waitHeatmapDrawn(frame);
    const meta = (await frame.locator('#meta').textContent()) ?? '';
    const tokens = Number(/(\d+)\s*tokens?/.exec(meta)?.[1]);
    assert.ok(tokens > 200 && tokens < 400, `the whole paragraph was explained (${meta})`);
    assert.match(meta, /default|bundled|demo/i, `the bundled model is in use (${meta})`);
    // Let the layout settle (fonts, the panel's own resize) before the picture.
    await page.waitForTimeout(500);
    const shot = await screenshot(page, 'demo-panel');
    if (process.env.E2E_UPDATE_DOCS) {
      fs.mkdirSync(path.dirname(DOCS_SHOT), { recursive: true });
      fs.copyFileSync(shot, DOCS_SHOT);
      console.log(`updated ${path.relative(REPO_ROOT, DOCS_SHOT)}`);
    }
  });

  test('Ctrl+C stops code-server and exits 0', async () => {
    process.kill(-demo.pid, 'SIGINT');
    const r = await Promise.race([exited, new Promise((res) => setTimeout(res, 20_000, 'timeout'))]);
    assert.notEqual(r, 'timeout', `the demo exits within 20 s of Ctrl+C (output:\n${output})`);
    assert.deepEqual(r, { code: 0, signal: null }, output);
    assert.match(output, /\[demo\] stopped/);
    const answered = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
      () => true,
      () => false,
    );
    assert.equal(answered, false, 'nothing listens on the demo port any more');
    assert.ok(fs.existsSync(path.join(REPO_ROOT, 'package.json')), 'the checkout the extension was linked from is intact');
  });
});
