// UI checks of the analysis views in code-server: each view draws a non-blank canvas and answers
// hover in #analysis-readout; mean-over-heads and the special-token toggle redraw the heatmap.
// Selectors: ./SELECTORS.md ("Analysis views"). Screenshots: test-results/e2e/views-*.png.
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, openMore, startExplained, stopWithScreenshot, waitHeatmapDrawn } from './lib/lens.mjs';
import { canvasStats, isDrawn, screenshot, waitUntil } from './lib/workbench.mjs';

const SAMPLE = ['The quick brown fox jumps over the lazy dog near the river bank.', ''].join('\n');
const skip = extensionMissing();

const VIEWS = [
  { view: 'shares', canvas: 'canvas#shares-grid', readout: /head \d+: (content|positional|mixed)/ },
  { view: 'ablation', canvas: 'canvas#ablation-diff', readout: /KL\(real/ },
  { view: 'distance', canvas: 'canvas#distance-chart', readout: /δ = / },
  { view: 'buckets', canvas: 'canvas#buckets-matrix', readout: /table row/ },
  { view: 'rollout', canvas: 'canvas#rollout-real', readout: /rollout/ },
];

describe('DeBERTa Lens analysis views', { skip: skip ?? false }, () => {
  let lens, frame, page;

  before(async () => {
    lens = await startExplained('views', SAMPLE);
    ({ frame, page } = lens);
  });

  after(() => stopWithScreenshot(lens, 'views'));

  for (const v of VIEWS) {
    test(`${v.view}: draws a non-blank canvas, has a caption, answers hover`, async () => {
      await frame.locator(`#view-${v.view}`).click();
      await frame.locator(`#app[data-view="${v.view}"]`).waitFor({ state: 'attached', timeout: 15_000 });
      const canvas = frame.locator(v.canvas);
      let stats;
      await waitUntil(
        async () => {
          stats = await canvasStats(canvas).catch(() => null);
          return stats && isDrawn(stats);
        },
        { timeout: 30_000, message: `${v.canvas} drawn (last ${JSON.stringify(stats)})` },
      );
      assert.ok((await frame.locator('#analysis-caption').textContent()).length > 40);
      const box = await canvas.boundingBox();
      assert.ok(box, `${v.canvas} is visible`);
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.6);
      await waitUntil(async () => v.readout.test((await frame.locator('#analysis-readout').textContent()) ?? ''), {
        message: `hover readout of ${v.view}`,
      });
      if (v.view === 'distance') assert.match(await frame.locator('#distance-peaks').textContent(), /peaks at δ = /);
      await screenshot(page, `views-${v.view}`);
    });
  }

  test('head picker mean/max and the special-token toggle redraw the heatmap', async () => {
    await frame.locator('#view-heatmap').click();
    await frame.locator('#term').selectOption('probs');
    await frame.locator('#head').selectOption('mean');
    await waitUntil(async () => /mean over heads/.test((await frame.locator('#legend-label').textContent()) ?? ''), {
      message: 'mean legend',
    });
    assert.ok(isDrawn(await waitHeatmapDrawn(frame)));
    await openMore(frame);
    await frame.locator('#discount-special').check();
    await waitUntil(async () => /specials discounted/.test((await frame.locator('#legend-label').textContent()) ?? ''), {
      message: 'discount legend',
    });
    await screenshot(page, 'views-mean-discounted');
  });
});
