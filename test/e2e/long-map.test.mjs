// A long input's heatmap (past 1,024 tokens, more than the map has pixels) comes as a picture: the host pools the
// head's colour steps to the canvas's side and the view paints them. Checked in code-server with the bundled model
// at ~1,300 tokens: the map is pooled and says so, hover still lights neighbours, zooming in brings every cell
// (and keeps them across a layer switch while zoomed), fitting again goes back to the picture, and a PNG figure
// still draws every cell. Screenshots: test-results/e2e/long-map-{fit,zoomed}.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, stopWithScreenshot, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { exportFigure } from './lib/figures.mjs';
import { canvasStats, isDrawn, openFile, runCommand, screenshot, selectAll, waitUntil } from './lib/workbench.mjs';

const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8').trim();
const TEXT = `${PROSE}\n\n${PROSE}`;
const skip = extensionMissing();

describe('a long input’s heatmap as a picture', { skip: skip ?? false }, () => {
  let lens, frame, page, n;
  const canvas = () => frame.locator('canvas#heatmap');
  const pixels = async () => Number(await canvas().evaluate((c) => c.dataset.pixels ?? '0'));
  const painted = async () => Number(await canvas().evaluate((c) => c.dataset.painted ?? '0'));

  before(async () => {
    lens = await startLens({ name: 'long-map', model: 'default', viewport: { width: 1280, height: 820 }, files: { 'long.txt': TEXT } });
    ({ frame, page } = lens);
    await openFile(page, 'long.txt');
    await selectAll(page);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await waitReady(frame, 120_000);
    await waitHeatmapDrawn(frame, { timeout: 60_000 });
    n = await frame.locator('#tokens .tok').count();
  });

  after(async () => {
    await stopWithScreenshot(lens, 'long-map');
  });

  test('the map is pooled to the canvas, says how, and is drawn', async () => {
    assert.ok(n > 1024, `the text is long enough: ${n} tokens`);
    const px = await pixels();
    assert.ok(px > 100 && px < n, `a picture of ${px} px a side for ${n} tokens`);
    assert.match(await frame.locator('#zoom-label').textContent(), /fit · 1 px = (\d+) × \1 cells: keys summed, top query/);
    const stats = await canvasStats(canvas());
    assert.ok(isDrawn(stats) && stats.distinctColours > 5, `drawn: ${JSON.stringify(stats)}`);
    await screenshot(page, 'long-map-fit');
  });

  test('hovering a token lights its neighbours', async () => {
    await page.waitForTimeout(600); // the rows' neighbours follow the picture
    await frame
      .locator('#tokens .tok')
      .nth(Math.floor(n / 2))
      .hover();
    await frame.locator('#tokens .tok.query').waitFor({ timeout: 10_000 });
    await waitUntil(async () => (await frame.locator('#tokens .tok.neighbour').count()) > 0, { message: 'neighbours lit' });
  });

  test('zooming in brings every cell, kept across a layer switch; fit goes back to the picture', async () => {
    await canvas().focus();
    for (let k = 0; k < 3; k++) await page.keyboard.press('+');
    await waitUntil(async () => (await pixels()) === n, { timeout: 30_000, message: `every cell (${n}) after zooming in` });
    await waitUntil(async () => !/more detail coming/.test(await frame.locator('#zoom-label').textContent()), {
      message: 'the zoom label no longer waits for detail',
    });
    await screenshot(page, 'long-map-zoomed');
    const before = await painted();
    await frame.locator('#layer').selectOption('1');
    await waitUntil(async () => (await painted()) > before, { timeout: 30_000, message: 'layer 1 painted' });
    assert.equal(await pixels(), n, 'zoomed in, the next layer comes with every cell');
    await canvas().focus();
    await page.keyboard.press('0');
    const fitted = await painted();
    await frame.locator('#layer').selectOption('2');
    await waitUntil(async () => (await painted()) > fitted, { timeout: 30_000, message: 'layer 2 painted' });
    assert.ok((await pixels()) < n, 'fitted, the next layer comes as a picture again');
  });

  test('a PNG figure draws every cell', async () => {
    const file = await exportFigure(lens, 'png', 'long-map-figure');
    assert.ok(fs.statSync(file).size > 20_000, `${file} is a real picture`);
  });
});
