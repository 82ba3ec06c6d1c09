// DeBERTa Lens specifics for the UI tests and the UI bench: start a workbench with the extension loaded,
// explain a selection, and read the webview through the selectors in ../SELECTORS.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { launchBrowser, openWorkbench } from './browser.mjs';
import { startCodeServer } from './code-server.mjs';
import { E2EError } from './errors.mjs';
import { FIXTURES, REPO_ROOT } from './paths.mjs';
import {
  canvasStats,
  isDrawn,
  openFile,
  runCommand,
  screenshot,
  selectLines,
  waitForCommand,
  waitUntil,
  webviewFrame,
} from './workbench.mjs';

export const FIXTURE_MODEL = path.join(FIXTURES, 'deberta', 'v3_tiny');
const MAIN = path.join(REPO_ROOT, 'dist', 'extension.js');

/** Why the extension cannot be tested yet, or null when it can. */
export function extensionMissing() {
  if (!fs.existsSync(path.join(REPO_ROOT, 'src', 'extension', 'extension.ts'))) return 'src/extension/extension.ts does not exist yet';
  if (!fs.existsSync(MAIN)) return 'dist/extension.js missing: run npm run build';
  return null;
}

/**
 * code-server + Chromium with the extension loaded from this checkout (the workbench's
 * extensionDevelopmentPath payload: no VSIX needed), or installed from `vsix`, and the fixture model set in
 * settings.json.
 * `model`: a model folder, or 'default' for the bundled model (modelPath left empty).
 */
export async function startLens({ name, files, model = FIXTURE_MODEL, settings = {}, viewport, vsix, linkExtension } = {}) {
  const missing = extensionMissing();
  if (missing) throw new E2EError(`cannot load the extension: ${missing}`);
  const server = await startCodeServer({
    name,
    files,
    vsix,
    linkExtension,
    settings: {
      'debertaLens.modelPath': model === 'default' ? '' : model,
      'debertaLens.executionProvider': 'cpu',
      ...settings,
    },
  });
  let browser;
  try {
    browser = await launchBrowser();
    const { page, consoleLines } = await openWorkbench(browser, server, {
      name,
      viewport,
      payload: vsix ? undefined : { extensionDevelopmentPath: REPO_ROOT },
    });
    // Menus and palette entries exist only once the extension host has picked up the extension.
    // (Select Model has no `when` clause; Explain is listed only with an editor open.)
    await waitForCommand(page, 'DeBERTa Lens: Select Model');
    const stop = async () => {
      await browser.close().catch(() => {});
      await server.stop();
    };
    return { server, browser, page, consoleLines, frame: webviewFrame(page), stop };
  } catch (e) {
    await browser?.close().catch(() => {});
    await server.stop();
    throw e;
  }
}

/** Waits until the panel shows a result (`#app[data-state="ready"]`). */
/** Opens the toolbar's folded group (special tokens, merge, colours, export, compare models) if it is closed. */
export async function openMore(frame) {
  const toggle = frame.locator('#more-toggle');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await frame.locator('#more-controls:not([hidden])').waitFor({ state: 'visible' });
}

export async function waitReady(frame, timeout = 60_000) {
  await frame.locator('#app[data-state="ready"]').waitFor({ state: 'attached', timeout });
}

/** Waits until `canvas#heatmap` has pixels of more than one colour; returns its stats. */
export async function waitHeatmapDrawn(frame, { timeout = 30_000, selector = 'canvas#heatmap' } = {}) {
  const canvas = frame.locator(selector).first();
  let last;
  await waitUntil(
    async () => {
      last = await canvasStats(canvas).catch(() => null);
      return last && isDrawn(last);
    },
    { timeout, interval: 20, message: `${selector} to be drawn (last: ${JSON.stringify(last)})` },
  );
  return last;
}

/** The values offered by a <select> in the webview toolbar (e.g. '#term', '#head'). */
export async function selectValues(frame, selector) {
  return frame.locator(`${selector} option`).evaluateAll((os) => os.map((o) => o.value));
}

/** Centre of heatmap cell (query i, key j), relative to canvas#heatmap (for hover({ position })), per SELECTORS.md. */
export async function cellPosition(frame, i, j, n) {
  const box = await frame.locator('canvas#heatmap').boundingBox();
  if (!box) throw new E2EError('canvas#heatmap has no bounding box (not visible)');
  return { x: (j + 0.5) * (box.width / n), y: (i + 0.5) * (box.height / n) };
}

/** Reads the readout's numbers for the hovered pair: { c2c: '0.123', … } (only kinds present). */
export async function readoutValues(frame) {
  return frame
    .locator('#readout dl.pair dd[data-kind]')
    .evaluateAll((dds) => Object.fromEntries(dds.map((d) => [d.dataset.kind, d.textContent.trim()])));
}

/** A workbench with `sample.txt` open and its first line explained from the palette: where the view tests start. */
export async function startExplained(name, text) {
  const lens = await startLens({ name, files: { 'sample.txt': text } });
  await openFile(lens.page, 'sample.txt');
  await selectLines(lens.page, 1, 1);
  await runCommand(lens.page, 'DeBERTa Lens: Explain Attention');
  await waitReady(lens.frame);
  return lens;
}

/** Screenshot of the last state (for a failure's post-mortem), then stop code-server and the browser. */
export async function stopWithScreenshot(lens, name) {
  if (lens?.page) await screenshot(lens.page, `${name}-last`).catch(() => {});
  await lens?.stop();
}
