// UI checks of word merging and selection diff in code-server: the Diff tab (current − previous explain), the
// word-merging toggle of the heatmap, and a refused explain's mark (then Ctrl+Alt+E from the panel). Selectors: ./SELECTORS.md ("Diff view", "Word merging").
// Screenshots: test-results/e2e/views2-*.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, openMore, startExplained, stopWithScreenshot, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { exportFigure } from './lib/figures.mjs';
import { canvasStats, focusTab, goToLine, isDrawn, runCommand, screenshot, selectAll, selectLines, waitUntil } from './lib/workbench.mjs';

const SAMPLE = ['The quick brown fox jumps over the lazy dog near the riverbank.', ''].join('\n');
const skip = extensionMissing();

async function tokenCount(frame) {
  return frame.locator('#tokens .tok').count();
}

describe('DeBERTa Lens diff view and word merging', { skip: skip ?? false }, () => {
  let lens, frame, page;

  before(async () => {
    lens = await startExplained('views2', SAMPLE);
    ({ frame, page } = lens);
  });

  after(() => stopWithScreenshot(lens, 'views2'));

  test('Diff before a second explain says how to get one', async () => {
    await frame.locator('#view-diff').click();
    await frame.locator('#app[data-view="diff"]').waitFor({ state: 'attached', timeout: 15_000 });
    await waitUntil(
      async () =>
        /Explain twice/.test(
          (await frame
            .locator('#diff-empty')
            .textContent()
            .catch(() => '')) ?? '',
        ),
      {
        message: '#diff-empty hint',
      },
    );
    assert.equal(await frame.locator('canvas#diff-matrix').count(), 0);
  });

  test('explain, edit, explain again: Diff draws current − previous, the edited tokens kept in grey', async () => {
    await frame.locator('#view-heatmap').click();
    const before = await tokenCount(frame);
    // Type a word into the line (after "The "), then explain the edited line. The panel has focus: go back
    // to the editor's group first.
    await focusTab(page, 'sample.txt');
    await goToLine(page, 1, 5);
    await page.keyboard.type('very ');
    await selectLines(page, 1, 1);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await waitUntil(async () => (await tokenCount(frame)) > before, {
      timeout: 60_000,
      message: `more tokens than ${before} after the edit`,
    });
    await frame.locator('#view-diff').click();
    const canvas = frame.locator('canvas#diff-matrix');
    const stats = await waitHeatmapDrawn(frame, { selector: 'canvas#diff-matrix' });
    const summary = await frame.locator('#diff-summary').textContent();
    const m = /current − previous explain, (\d+) of (\d+) tokens matched \(previous had (\d+)\)/.exec(summary ?? '');
    assert.ok(m, `diff summary: ${summary}`);
    const [matched, current, previous] = m.slice(1).map(Number);
    assert.ok(current > previous, `the edit added tokens (${previous} → ${current})`);
    assert.ok(matched >= previous - 1 && matched < current, `${matched} matched`);
    // The edited tokens keep their rows and columns (grey: nothing to subtract), and the caption names them.
    assert.equal(stats.width, current, 'one backing pixel per current token, the edited ones included');
    assert.equal(await frame.locator('#diff-labels li').count(), current);
    assert.equal(await frame.locator('#diff-labels li.diff-new').count(), current - matched);
    const added = (await frame.locator('#diff-labels li.diff-new').allTextContents()).join('');
    assert.match(added, /^␣?very␣?$/, `the inserted pieces spell the typed word: ${added}`);
    assert.match((await frame.locator('#diff-edited').textContent()) ?? '', /new in this text \(“/);
    assert.ok((await frame.locator('#analysis-caption').textContent()).length > 40);
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.6);
    await waitUntil(
      async () => /current − previous \w+ = -?[\d.]|no previous value/.test((await frame.locator('#analysis-readout').textContent()) ?? ''),
      {
        message: 'diff hover readout',
      },
    );
    await screenshot(page, 'views2-diff');
  });

  test('merge pieces into words: the heatmap redraws with fewer rows and the strip shows words', async () => {
    await frame.locator('#view-heatmap').click();
    await frame.locator('#term').selectOption('probs');
    await waitHeatmapDrawn(frame);
    const side = async () => Number(await frame.locator('canvas#heatmap').getAttribute('data-n'));
    const pieces = await side();
    assert.equal(pieces, await tokenCount(frame));
    await openMore(frame);
    await frame.locator('#merge-words').check();
    let rows;
    await waitUntil(
      async () => {
        rows = await side();
        return rows < pieces && isDrawn(await canvasStats(frame.locator('canvas#heatmap')));
      },
      { timeout: 30_000, message: `merged heatmap with fewer than ${pieces} rows (last ${rows})` },
    );
    assert.equal(await tokenCount(frame), rows, 'one strip item per word row');
    assert.ok((await frame.locator('#tokens .tok.word', { hasText: 'riverbank' }).count()) >= 1, 'a multi-piece word is one strip item');
    assert.match(await frame.locator('#merge-caption').textContent(), /each row is the mean .* each column the sum/);
    await screenshot(page, 'views2-merged');
    await frame.locator('#merge-words').uncheck();
    await waitUntil(async () => (await side()) === pieces, { message: 'pieces again' });
    assert.equal(await tokenCount(frame), pieces);
  });

  test('a refused explain marks the panel; Ctrl+Alt+E from the panel explains again and clears the mark', async () => {
    await frame.locator('#view-heatmap').click();
    await frame.locator('#term').selectOption('c2c');
    // Log colours do nothing on a signed term: the option is off there.
    assert.equal(await frame.locator('#scaling option[value="log"]').isDisabled(), true);
    const shown = await frame.locator('#app').getAttribute('data-result');
    // The cursor on the empty line 2: nothing to explain. The panel keeps its result, marked and dimmed.
    await focusTab(page, 'sample.txt');
    await goToLine(page, 2, 1);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await frame.locator('#stale').waitFor({ timeout: 15_000 });
    assert.match((await frame.locator('#stale').textContent()) ?? '', /^Last explain failed: Nothing to explain.*the previous result/);
    assert.equal(await frame.locator('#app').getAttribute('data-stale'), 'true');
    assert.equal(await frame.locator('#app').getAttribute('data-result'), shown, 'the old result is still there');
    await screenshot(page, 'views2-failed');
    // Select line 1, then the keybinding with the focus inside the panel.
    await selectLines(page, 1, 1);
    await frame.locator('#meta').click();
    await page.keyboard.press('Control+Alt+E');
    await waitUntil(
      async () =>
        (await frame
          .locator('#app')
          .getAttribute('data-result')
          .catch(() => shown)) !== shown,
      {
        timeout: 60_000,
        message: 'a new result after Ctrl+Alt+E in the panel',
      },
    );
    assert.equal(await frame.locator('#stale').count(), 0);
    assert.equal(await frame.locator('#app').getAttribute('data-stale'), null);
  });
  test('Lines and All heads at a few hundred tokens: hover isolates a word, a thumbnail opens its head, repaints ≤ 100 ms', async () => {
    const prose = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
    const text = prose.slice(0, prose.lastIndexOf(' ', 380)).replace(/\s+/g, ' ');
    await focusTab(page, 'sample.txt');
    await selectAll(page);
    await page.keyboard.insertText(text);
    await selectAll(page);
    const shown = await frame.locator('#app').getAttribute('data-result');
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await waitUntil(
      async () =>
        (await frame
          .locator('#app')
          .getAttribute('data-result')
          .catch(() => shown)) !== shown,
      {
        timeout: 60_000,
        message: 'the long text explained',
      },
    );
    await waitReady(frame);
    const n = await tokenCount(frame);
    assert.ok(n >= 200, `${n} tokens`);
    // Lines: drawn, a hovered query word keeps only its row, scrolling repaints the window in view.
    await frame.locator('#view-lines').click();
    const lines = frame.locator('canvas#line-canvas');
    const attr = async (loc, a) => Number((await loc.getAttribute(a).catch(() => null)) ?? NaN);
    await waitUntil(async () => (await attr(lines, 'data-lines')) > 0, { timeout: 30_000, message: 'lines drawn' });
    const all = await attr(lines, 'data-lines');
    const box = await lines.boundingBox();
    await page.mouse.move(box.x + box.width * 0.1, box.y + 6 + 16 * 4.5);
    await waitUntil(async () => /^query “.*” #4 — strongest keys: “/.test((await frame.locator('#analysis-readout').textContent()) ?? ''), {
      message: 'readout of the hovered query word',
    });
    const one = await attr(lines, 'data-lines');
    // One word's row: at most one line per key (the view showed ${all} before, from every word in view).
    assert.ok(one >= 1 && one <= n, `isolated row: ${one} lines (${all} before the hover)`);
    await screenshot(page, 'views2-lines');
    await page.mouse.move(box.x + box.width / 2, box.y - 40);
    for (const f of [0.25, 0.5, 0.75, 1]) {
      await frame.locator('#line-scroll').evaluate((b, f) => (b.scrollTop = (b.scrollHeight - b.clientHeight) * f), f);
      await waitUntil(async () => Number((await lines.getAttribute('data-window')).split('-')[1]) >= Math.floor(n * f * 0.9), {
        message: `window at ${f}`,
      });
    }
    const linesMs = await attr(lines, 'data-max-paint-ms');
    const linesFirst = await attr(lines, 'data-first-paint-ms');
    await frame.locator('#line-terms button[data-term="c2p"]').click();
    await waitUntil(async () => /c2p weight/.test((await lines.getAttribute('aria-label').catch(() => '')) ?? ''), {
      message: 'c2p lines',
    });
    // Exported, the Lines view is lines: the words on screen (the last window scrolled to) with their lines, in SVG and PNG.
    const svg = fs.readFileSync(await exportFigure(lens, 'svg', 'views2-lines-figure'), 'utf8');
    assert.ok((svg.match(/<line /g) ?? []).length > 10, 'the figure draws lines');
    assert.match(svg, /c2p · layer \d+ · head \d+ · lines/);
    const words = svg.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    assert.match(words, new RegExp(`Rows \\d+–\\d+ of ${n} \\(those on screen\\)`));
    const png = fs.readFileSync(await exportFigure(lens, 'png', 'views2-lines-figure'));
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    // All heads: thumbnails load; a click opens layer 1, head 2 in the heatmap.
    await frame.locator('#view-model').click();
    const grid = frame.locator('canvas#model-canvas');
    await waitUntil(async () => (await attr(grid, 'data-loaded')) >= 2, { timeout: 30_000, message: 'both layers loaded' });
    await screenshot(page, 'views2-model');
    const modelMs = await attr(grid, 'data-max-paint-ms');
    const modelFirst = await attr(grid, 'data-first-paint-ms');
    console.log(
      `[views2] ${n} tokens: slowest repaint lines ${linesMs.toFixed(1)} ms, model ${modelMs.toFixed(1)} ms (first paint ${linesFirst.toFixed(1)} / ${modelFirst.toFixed(1)} ms)`,
    );
    assert.ok(linesMs <= 100 && modelMs <= 100, `repaints ${linesMs} / ${modelMs} ms`);
    const [thumb, gap, lw, lh] = await Promise.all(['data-thumb', 'data-gap', 'data-label-w', 'data-label-h'].map((a) => attr(grid, a)));
    const g = await grid.boundingBox();
    await page.mouse.click(g.x + lw + 2 * (thumb + gap) + thumb / 2, g.y + lh + (thumb + gap) + thumb / 2);
    await frame.locator('#app[data-view="heatmap"]').waitFor({ state: 'attached', timeout: 15_000 });
    assert.equal(await frame.locator('#layer').inputValue(), '1');
    assert.equal(await frame.locator('#head').inputValue(), '2');
    assert.equal(await frame.locator('#term').inputValue(), 'c2p');
    await waitHeatmapDrawn(frame);
  });
});
