// Harness smoke test, independent of the extension: code-server starts, the workbench opens a file,
// a selection + a palette command change the text, the context menu opens, a screenshot is written.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, test } from 'node:test';
import { launchBrowser, openWorkbench } from './lib/browser.mjs';
import { startCodeServer } from './lib/code-server.mjs';
import { editorText, openFile, runCommand, screenshot, selectLines } from './lib/workbench.mjs';

let server, browser, page;

before(async () => {
  server = await startCodeServer({
    name: 'smoke',
    files: { 'smoke.txt': 'first line stays\nshout this line\nlast line stays\n' },
  });
  browser = await launchBrowser();
  ({ page } = await openWorkbench(browser, server, { name: 'smoke' }));
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('code-server answers /healthz on 127.0.0.1', async () => {
  const res = await fetch(`${server.url}/healthz`);
  assert.equal(res.status, 200);
});

test('open a file, select a line, run a palette command on it', async () => {
  await openFile(page, 'smoke.txt');
  await selectLines(page, 2, 2);
  await runCommand(page, 'Transform to Uppercase');
  const text = await editorText(page).then(async (t) => (t.includes('SHOUT') ? t : (await page.waitForTimeout(500), editorText(page))));
  assert.match(text, /^first line stays\nSHOUT THIS LINE\nlast line stays/);
});

test('the editor context menu opens and lists Command Palette', async () => {
  await selectLines(page, 1, 1);
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').click({ button: 'right' });
  const item = page.locator('.monaco-menu .action-item a.action-menu-item', { hasText: 'Command Palette' }).first();
  await item.waitFor({ state: 'visible', timeout: 10_000 });
  const file = await screenshot(page, 'smoke-context-menu');
  await page.keyboard.press('Escape');
  assert.ok(fs.statSync(file).size > 10_000, 'screenshot has content');
});

test('screenshot of the workbench is written', async () => {
  const file = await screenshot(page, 'smoke-workbench');
  assert.ok(fs.statSync(file).size > 10_000, `${file} is a real picture`);
});
