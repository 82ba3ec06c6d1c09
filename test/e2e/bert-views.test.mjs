// The main panel's analysis tabs with a BERT model (the bert_tiny fixture) in code-server, light and dark (from the
// packaged VSIX: dark themes apply only to an installed extension): Term shares and Distance show layer 0's split,
// and the numbers they display for one head equal those computed here from Hugging Face's layer-0 split stored in
// the fixture; layer 1 and the tabs that cannot apply say so in one line. Screenshots at ~30 and 64 tokens (the
// fixture has 64 absolute positions: no longer input exists for it): test-results/e2e/bert-views-*.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, stopWithScreenshot, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { FIXTURES } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { canvasStats, focusTab, isDrawn, openFile, runCommand, screenshot, selectAll, waitUntil } from './lib/workbench.mjs';

const BERT = path.join(FIXTURES, 'bert', 'bert_tiny');
const CASE = JSON.parse(fs.readFileSync(path.join(BERT, 'expected_outputs.json'), 'utf8')).cases.find((c) => c.name === 'text0_mask');
const SPLIT = ['c2c', 'c2p', 'p2c', 'p2p', 'rest'];
const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
const cut = (chars) => PROSE.slice(0, PROSE.lastIndexOf(' ', chars));
// bert_tiny's WordPiece splits prose finely: these cuts are 29 and 64 tokens (its max_position_embeddings).
const FILES = { 'fixture.txt': CASE.text, 'len30.txt': cut(44), 'len64.txt': cut(96) };
const THEMES = { light: 'Default Light Modern', dark: 'Default Dark Modern' };
const HEAD = 1;
const skip = extensionMissing();

// References, straight from HF's split: per head the mean over cells of |t| / Σ|t|, and the mean of a term per δ.
const split = CASE.expected.layer0_decomposition;
function shareRef(head, term) {
  const n = split.c2c[head].length;
  let acc = 0;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) acc += Math.abs(split[term][head][i][j]) / SPLIT.reduce((a, t) => a + Math.abs(split[t][head][i][j]), 0);
  return acc / (n * n);
}
function meanAtDelta(head, term, delta) {
  const m = split[term][head];
  const cells = m.flatMap((row, i) => row.filter((_, j) => i - j === delta));
  return cells.reduce((a, b) => a + b, 0) / cells.length;
}

let vsix;
before(() => {
  if (!skip) vsix = packageVsix();
});
after(() => {
  if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
});

for (const theme of ['light', 'dark']) {
  describe(`BERT in the analysis tabs, ${theme} theme (bert_tiny)`, { skip: skip ?? false }, () => {
    let lens, frame, page;
    let lastFile;

    before(async () => {
      lens = await startLens({
        name: `bert-views-${theme}`,
        model: BERT,
        vsix,
        viewport: { width: 1400, height: 1000 },
        settings: { 'workbench.colorTheme': THEMES[theme] },
        files: FILES,
      });
      ({ frame, page } = lens);
    });
    after(() => stopWithScreenshot(lens, `bert-views-${theme}`));

    /** Explains the whole of `file` from the heatmap tab; returns the token count. */
    async function explain(file) {
      if (lastFile) await focusTab(page, lastFile).catch(() => {});
      lastFile = file;
      await openFile(page, file);
      await selectAll(page);
      const before = await frame
        .locator('canvas#heatmap')
        .getAttribute('data-n')
        .catch(() => null);
      await runCommand(page, 'DeBERTa Lens: Explain Attention');
      await waitReady(frame, 120_000);
      await frame.locator('#view-heatmap').click();
      await waitUntil(
        async () => {
          const now = await frame
            .locator('canvas#heatmap')
            .getAttribute('data-n')
            .catch(() => null);
          return now !== null && now !== before;
        },
        { timeout: 60_000, message: `heatmap for ${file}` },
      );
      await waitHeatmapDrawn(frame);
      // The progress toast can outlive the run by a moment: let it go before a screenshot.
      await waitUntil(async () => (await page.locator('.notification-toast', { hasText: 'explaining' }).count()) === 0, {
        timeout: 15_000,
        message: 'progress toast gone',
      }).catch(() => {});
      return Number(await frame.locator('canvas#heatmap').getAttribute('data-n'));
    }

    /** Picks layer and head on the heatmap tab (some tabs hide the pickers), then opens `view`. */
    async function openTab(view, layer = 0, head = HEAD) {
      await frame.locator('#view-heatmap').click();
      await frame.locator('#layer').selectOption(String(layer));
      await frame.locator('#head').selectOption(String(head));
      await frame.locator(`#view-${view}`).click();
      await frame.locator(`#app[data-view="${view}"]`).waitFor({ state: 'attached', timeout: 15_000 });
    }

    async function chartDrawn() {
      let stats;
      await waitUntil(
        async () => {
          stats = await canvasStats(frame.locator('canvas#distance-chart')).catch(() => null);
          return stats && isDrawn(stats);
        },
        { timeout: 30_000, message: `distance chart drawn (last ${JSON.stringify(stats)})` },
      );
    }

    /** Whether the panel's page scrolls sideways (something wider than the panel). */
    const pageOverflows = () =>
      frame.locator('body').evaluate(() => document.scrollingElement.scrollWidth > document.scrollingElement.clientWidth + 1);

    test(`Term shares, layer 0 head ${HEAD}: the five displayed shares equal HF's split (fixture text, 13 tokens)`, async () => {
      const n = await explain('fixture.txt');
      assert.equal(n, CASE.input_ids.length);
      const body = await frame.locator('body').getAttribute('class');
      assert.ok(body.split(/\s+/).includes(`vscode-${theme}`), `the webview shows the ${theme} theme (${body})`);
      await openTab('shares');
      await frame.locator('#bert-shares').waitFor({ timeout: 30_000 });
      assert.equal(await frame.locator('#bert-shares tbody tr').count(), 4);
      assert.equal(await frame.locator('#shares-grid').count(), 0, 'no DeBERTa layer × head grid');
      for (const term of SPLIT) {
        const shown = await frame.locator(`#bert-shares tr[data-head="${HEAD}"] td[data-term="${term}"] .share-num`).textContent();
        const want = 100 * shareRef(HEAD, term);
        assert.ok(Math.abs(parseFloat(shown) - want) <= 0.051, `${term}: shown ${shown}, HF ${want.toFixed(3)}%`);
      }
      assert.match(await frame.locator('#bert-shares-later').textContent(), /^Layer 1: no term shares/);
      assert.match(await frame.locator('#analysis-caption').textContent(), /p2p and rest/);
    });

    test(`Distance, layer 0 head ${HEAD}: the hover readout's means per δ equal HF's split`, async () => {
      await openTab('distance');
      await chartDrawn();
      assert.match(await frame.locator('#analysis-caption').textContent(), /absolute position embeddings.*exact in layer 0 only/);
      assert.match(await frame.locator('#distance-peaks').textContent(), new RegExp(`^Layer 0, head ${HEAD}: c2p peaks at δ = `));
      assert.equal(await frame.locator('#distance-legend .legend-item').count(), 4);
      const n = CASE.input_ids.length;
      const box = await frame.locator('canvas#distance-chart').boundingBox();
      const scale = Math.max(...SPLIT.flatMap((t) => split[t].flat(2).map(Math.abs)));
      for (const delta of [-5, 0, 1, 7]) {
        const k = delta + n - 1;
        await page.mouse.move(box.x + ((k + 0.5) / (2 * n - 1)) * box.width, box.y + box.height / 2);
        let text = '';
        await waitUntil(async () => (text = (await frame.locator('#analysis-readout').textContent()) ?? '').startsWith(`δ = ${delta} `), {
          message: `readout at δ = ${delta}`,
        });
        const shown = Object.fromEntries([...text.matchAll(/(c2c|c2p|p2c|p2p) mean (\S+) ±/g)].map((m) => [m[1], Number(m[2])]));
        assert.deepEqual(Object.keys(shown), ['c2c', 'c2p', 'p2c', 'p2p'], text);
        for (const [term, got] of Object.entries(shown)) {
          const want = meanAtDelta(HEAD, term, delta);
          assert.ok(Math.abs(got - want) <= 6e-4 * Math.abs(want) + 1e-4 * scale, `δ = ${delta} ${term}: shown ${got}, HF ${want}`);
        }
      }
    });

    test('layer 1 says it has no split; Softmax ablation and Buckets say in one line why they do not apply', async () => {
      await openTab('distance', 1);
      await waitUntil(
        async () =>
          /no separable terms in layer 1/.test(
            (await frame
              .locator('#distance-peaks')
              .textContent()
              .catch(() => '')) ?? '',
          ),
        { message: 'layer 1 line' },
      );
      assert.equal(await frame.locator('canvas#distance-chart').count(), 0);
      await screenshot(page, `bert-views-${theme}-distance-layer1`);
      for (const view of ['ablation', 'buckets']) {
        await openTab(view);
        const line = await frame.locator('#analysis-unavailable').textContent({ timeout: 15_000 });
        assert.match(line, /BERT/);
        assert.equal(await frame.locator(`#${view}-view canvas`).count(), 0);
      }
      await screenshot(page, `bert-views-${theme}-buckets`);
    });

    for (const file of ['len30.txt', 'len64.txt']) {
      test(`screenshots of Distance and Term shares at ${file === 'len30.txt' ? '29' : '64'} tokens; the page never scrolls sideways`, async () => {
        const n = await explain(file);
        assert.equal(n, file === 'len30.txt' ? 29 : 64);
        await openTab('distance', 0, 0);
        await chartDrawn();
        assert.equal(await pageOverflows(), false, 'Distance is wider than the panel');
        await screenshot(page, `bert-views-${theme}-${n}-distance`);
        await openTab('shares', 0, 0);
        await frame.locator('#bert-shares').waitFor({ timeout: 30_000 });
        assert.equal(await pageOverflows(), false, 'Term shares is wider than the panel');
        await frame.locator('#bert-shares tbody tr').nth(2).hover();
        await waitUntil(async () => /^Layer 0, head 2: c2c /.test((await frame.locator('#analysis-readout').textContent()) ?? ''), {
          message: 'share readout',
        });
        await screenshot(page, `bert-views-${theme}-${n}-shares`);
      });
    }
  });
}
