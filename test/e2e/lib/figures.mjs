// The panel's figure export as a user runs it (More → Export PNG/SVG → the figure form → the save dialog's
// proposal), the file copied to test-results/e2e/; an SVG is parsed by Chromium's XML parser and drawn to a PNG to look at.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openMore } from './lens.mjs';
import { RESULTS_DIR } from './paths.mjs';
import { waitUntil } from './workbench.mjs';

/**
 * Exports the view on screen as a figure through the panel (figure form, then the save dialog's proposal) and copies
 * it to test-results/e2e/<name>.<format>; an SVG is also parsed by Chromium's XML parser and drawn to <name>-svg.png.
 */
export async function exportFigure(lens, format, name) {
  const { frame, page } = lens;
  await openMore(frame);
  await frame.locator(`#export-${format}`).click();
  await frame.locator('#export-form:not([hidden]) #export-save').click();
  const input = page.locator('.quick-input-widget input');
  let proposed = '';
  await waitUntil(async () => new RegExp(`\\.${format}$`).test((proposed = await input.inputValue().catch(() => ''))), {
    timeout: 15_000,
    message: `the save dialog proposes a .${format} file`,
  });
  await page.keyboard.press('Enter');
  const file = path.join(lens.server.dirs.workspace, path.basename(proposed));
  await waitUntil(() => fs.existsSync(file) && fs.statSync(file).size > 0, { timeout: 30_000, message: `${file} written` });
  await page.waitForTimeout(300);
  const out = path.join(RESULTS_DIR, `${name}.${format}`);
  fs.copyFileSync(file, out);
  if (format === 'svg') await drawSvg(page, fs.readFileSync(file, 'utf8'), path.join(RESULTS_DIR, `${name}-svg.png`), 113.4, `${name}.svg`);
  return out;
}

/**
 * Parses `svg` with Chromium's XML parser (asserting it is well formed) and draws it to the PNG `out`, `pxPerCm`
 * CSS pixels per centimetre of its width and height, to look at.
 */
export async function drawSvg(page, svg, out, pxPerCm = 60, what = 'the SVG') {
  const view = await page.context().newPage();
  try {
    const error = await view.evaluate(
      (s) => new DOMParser().parseFromString(s, 'image/svg+xml').querySelector('parsererror')?.textContent ?? null,
      svg,
    );
    assert.equal(error, null, `${what} parses as XML`);
    await view.setContent(
      `<body style="margin:0">${svg.replace(/width="([\d.]+)cm" height="([\d.]+)cm"/, (m, w, h) => `width="${w * pxPerCm}" height="${h * pxPerCm}"`)}</body>`,
    );
    await view.locator('svg').screenshot({ path: out });
  } finally {
    await view.close();
  }
}
