// Playwright helpers for the VS Code workbench: files, selections, commands, menus, webviews, screenshots.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2EError } from './errors.mjs';
import { EXTENSION_ID, RESULTS_DIR } from './paths.mjs';

const EDITOR = '.editor-group-container.active .monaco-editor';

/**
 * Opens a workspace file and waits until its editor is active: a click in the explorer for top-level files
 * (no file search involved), else quick open (Ctrl+P), whose file search can be slow on a busy machine.
 */
export async function openFile(page, fileName, { timeout = 30_000 } = {}) {
  const row = page
    .locator(
      `.explorer-folders-view .monaco-list-row[aria-label="${fileName}"], .explorer-folders-view .monaco-list-row:has(.label-name:text-is("${fileName}"))`,
    )
    .first();
  if (
    !fileName.includes('/') &&
    (await row.waitFor({ timeout: 10_000 }).then(
      () => true,
      () => false,
    ))
  ) {
    await row.click();
  } else {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout });
    await input.fill(fileName);
    // Wait for the result to be listed before Enter, or Enter may act on an empty list.
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout });
    await page.keyboard.press('Enter');
  }
  const base = fileName.split('/').pop();
  await page.locator(`.tab.active[data-resource-name="${base}"]`).first().waitFor({ timeout });
  await page.locator(`${EDITOR} .view-lines`).waitFor({ timeout });
}

/** Activates the editor tab of an open file (and so its editor group). */
export async function focusTab(page, fileName) {
  await page.locator(`.tab[data-resource-name="${fileName}"]`).first().click();
  await page.locator(`.tab.active[data-resource-name="${fileName}"]`).first().waitFor({ timeout: 10_000 });
}

/** Focuses the active editor's text (a click on its text area). */
export async function focusEditor(page) {
  await page.locator(`${EDITOR} .view-lines`).click();
}

/** Selects whole lines [from, to] (1-based) of the active editor with the Go to Line box and Shift+arrows. */
export async function selectLines(page, from, to) {
  await goToLine(page, from);
  await page.keyboard.press('Home');
  await page.keyboard.press('Home'); // twice: first Home stops at the first non-blank character
  for (let i = from; i < to; i++) await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+End');
}

/** Selects all text of the active editor. */
export async function selectAll(page) {
  await focusEditor(page);
  await page.keyboard.press('Control+A');
}

/** Moves the cursor to line:column (1-based) through quick open's ":line:column" (Ctrl+G is not Go to Line on web). */
export async function goToLine(page, line, column) {
  await focusEditor(page);
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(column ? `:${line}:${column}` : `:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The text the active editor currently selects, read from the workbench's own model (no clipboard). */
export async function selectedText(page) {
  return page.evaluate(() => window.getSelection()?.toString() ?? '');
}

/** The visible text of the active editor (lines in order); enough for short test files. */
export async function editorText(page) {
  return page.locator(`${EDITOR} .view-lines`).evaluate((el) =>
    [...el.querySelectorAll('.view-line')]
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text)
      .join('\n'),
  );
}

/** Runs a command by its palette title (F1, ">title", Enter). Fails if the palette has no such entry. */
export async function runCommand(page, title, { timeout = 15_000 } = {}) {
  const input = page.locator('.quick-input-widget input');
  await openPalette(page, input, timeout);
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  try {
    await row.waitFor({ timeout });
  } catch {
    await page.keyboard.press('Escape');
    throw new E2EError(`the command palette has no entry "${title}"`);
  }
  await page.keyboard.press('Enter');
}

/**
 * Opens the command palette. A key pressed while a webview holds the focus reaches the workbench only through the
 * webview's forwarding, which now and then drops it (seen in CI right after a webview tab was clicked); so the key
 * is pressed again, F1 and Ctrl+Shift+P in turn, from the third try with the focus on the workbench, until the
 * palette shows or the time is up.
 */
async function openPalette(page, input, timeout) {
  const deadline = Date.now() + timeout;
  for (let attempt = 0; ; attempt++) {
    // Two keys lost to the webview: take the focus back to the workbench (its window title, which does nothing
    // when clicked; the active editor group stays the one the caller chose).
    if (attempt >= 2)
      await page
        .locator('.part.titlebar')
        .click({ position: { x: 400, y: 10 } })
        .catch(() => {});
    await page.keyboard.press(attempt % 2 === 0 ? 'F1' : 'Control+Shift+P');
    const left = deadline - Date.now();
    try {
      await input.waitFor({ state: 'visible', timeout: Math.max(1, Math.min(3_000, left)) });
      return;
    } catch (err) {
      if (Date.now() >= deadline) throw err;
    }
  }
}

/**
 * Waits until the palette lists a command (an extension's contributions appear only once the extension
 * host has scanned it, some seconds after the workbench shows). Leaves the palette closed.
 */
export async function waitForCommand(page, title, { timeout = 60_000 } = {}) {
  const deadline = Date.now() + timeout;
  const input = page.locator('.quick-input-widget input');
  while (Date.now() < deadline) {
    await openPalette(page, input, 10_000);
    await input.fill(`>${title}`);
    const found = await page
      .locator('.quick-input-list .monaco-list-row', { hasText: title })
      .first()
      .waitFor({ timeout: 2_000 })
      .then(
        () => true,
        () => false,
      );
    await page.keyboard.press('Escape');
    if (found) return;
    await page.waitForTimeout(500);
  }
  throw new E2EError(`the command "${title}" did not appear in the palette within ${timeout} ms (extension not loaded?)`);
}

/** Right-clicks the active editor's selection and picks a context-menu item (menus render in a shadow root). */
export async function editorContextMenu(page, label, { timeout = 10_000 } = {}) {
  // The selection is drawn in an overlay layer under the text, so click its centre by coordinates.
  // The selection overlay can be re-rendered (and have no box) for a moment after the selection changes on a
  // loaded machine: retry, then fall back to the text area.
  let box = null;
  for (let attempt = 0; attempt < 20 && !box; attempt++) {
    const sel = page.locator(`${EDITOR} .selected-text`).first();
    box = (await sel.count()) ? await sel.boundingBox() : null;
    if (!box) await page.waitForTimeout(250);
  }
  box ??= await page.locator(`${EDITOR} .view-lines`).first().boundingBox();
  if (!box) throw new E2EError('the active editor is not visible');
  await page.mouse.click(box.x + Math.min(box.width / 2, 40), box.y + box.height / 2, { button: 'right' });
  await pickMenuItem(page, label, { timeout, menu: 'the editor context menu' });
}

/** Picks `label` in the context menu just opened (the editor's, the explorer's, a webview's). */
export async function pickMenuItem(page, label, { timeout = 10_000, menu: what = 'the context menu' } = {}) {
  const item = page.locator('.monaco-menu .action-item a.action-menu-item', { hasText: label }).first();
  try {
    await item.waitFor({ state: 'visible', timeout });
  } catch {
    const labels = await page.locator('.monaco-menu .action-label').allTextContents();
    await page.keyboard.press('Escape');
    throw new E2EError(`${what} has no item "${label}"; it has: ${labels.filter(Boolean).join(' | ')}`);
  }
  await item.click();
  // A menu can ignore a click that lands just after it opened (seen on a loaded CI machine: the item highlighted,
  // the menu still open); the item is then the focused one, so Enter runs it.
  const menu = page.locator('.monaco-menu').first();
  const closed = await menu.waitFor({ state: 'hidden', timeout: 2_000 }).then(
    () => true,
    () => false,
  );
  if (!closed) {
    await item.hover();
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'hidden', timeout });
  }
}

/**
 * The extension's webview content frame: the outer iframe picked by extension id, then its active inner frame.
 * `hover()` and `click()` work through both frames.
 */
export function webviewFrame(page, extensionId = EXTENSION_ID) {
  return page.frameLocator(`iframe.webview.ready[src*="extensionId=${extensionId}"]`).frameLocator('iframe#active-frame');
}

/**
 * Whether a canvas shows a picture: reads its pixels inside its own frame and counts distinct colours.
 * Returns { width, height, distinctColours, nonBackground } where nonBackground counts pixels that differ
 * from the top-left pixel (a blank or uniformly filled canvas gives 0).
 */
export async function canvasStats(canvasLocator) {
  return canvasLocator.evaluate((c) => {
    const ctx = c.getContext('2d');
    if (!ctx || c.width === 0 || c.height === 0) return { width: c.width, height: c.height, distinctColours: 0, nonBackground: 0 };
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const bg = data.slice(0, 4).join(',');
    const colours = new Set();
    let nonBackground = 0;
    for (let i = 0; i < data.length; i += 4) {
      const px = `${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`;
      if (colours.size < 4096) colours.add(px);
      if (px !== bg) nonBackground++;
    }
    return { width: c.width, height: c.height, distinctColours: colours.size, nonBackground };
  });
}

/** A canvas is "drawn" when it has a real size and more than one colour. */
export function isDrawn(stats) {
  return stats.width > 0 && stats.height > 0 && stats.distinctColours > 1 && stats.nonBackground > 0;
}

/** Saves a full-workbench screenshot (webview included) to test-results/e2e/<name>.png and returns the path. */
export async function screenshot(page, name) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Class names of decorations currently drawn in the active editor (overlays + inline text decorations). */
export async function editorDecorationClasses(page) {
  return page
    .locator(EDITOR)
    .first()
    .evaluate((ed) => {
      const classes = new Set();
      for (const el of ed.querySelectorAll('.view-overlays div > div, .view-lines span[class*="ced-"], .view-lines span span')) {
        for (const c of el.classList) classes.add(c);
      }
      return [...classes];
    });
}

/** Waits until `fn()` returns a truthy value (polling), or throws E2EError(message). */
export async function waitUntil(fn, { timeout = 15_000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, interval));
  }
  throw new E2EError(`timed out after ${timeout} ms waiting for ${message}`);
}
