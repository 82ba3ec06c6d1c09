// "Compare with Another Model…" in code-server: explain a sample with the bundled DeBERTa model, put the BERT
// fixture beside it (picked from the workbench's Hugging Face cache, as a user would), and check both heatmaps
// paint with axis labels, the alignment strip, the linked hover on both sides, BERT's layer-0 terms, and the
// Difference view (pooled over aligned spans for different tokenizers, cell by cell for the same model and for
// the bundled BERT twin, which shares the default model's tokenizer).
// Screenshots: test-results/e2e/compare-*.png. With E2E_COMPARE_SHOTS=1 also light and dark at ~30 and ~120
// tokens from the packaged VSIX (dark themes apply only to an installed extension).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { frameWith, installHubModel, lensFrame, paintCount, runCompare, waitPainted } from './lib/compare.mjs';
import { drawSvg } from './lib/figures.mjs';
import { extensionMissing, openMore, startLens, stopWithScreenshot } from './lib/lens.mjs';
import { FIXTURES, RESULTS_DIR as RESULTS } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { focusTab, openFile, runCommand, screenshot, selectLines, waitForCommand, waitUntil } from './lib/workbench.mjs';

const BERT = path.join(FIXTURES, 'bert', 'bert_tiny');
const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
const cut = (chars) => PROSE.slice(0, PROSE.lastIndexOf(' ', chars));
const SAMPLE = 'Café owners didn’t expect 3 robots to queue, naïvely, at 7:45!';
const skip = extensionMissing();
const ROBERTA = (lens) => path.join(lens.server.dirs.workspace, 'roberta-base');

/** Explains line 1 of `file` with the bundled model, then gives the editor area one column (the compare panel full width). */
async function explainLine(page, file) {
  await openFile(page, file);
  await selectLines(page, 1, 1);
  await runCommand(page, 'DeBERTa Lens: Explain Attention');
  await lensFrame(page);
}

/** One editor column, so the compare panel gets the width; the move reloads its page, so its frame is found again. */
async function fullWidth(page) {
  await runCommand(page, 'View: Single Column Editor Layout');
  // The merged group shows whichever tab was active: bring the compare panel to the front.
  await page.locator('.tab', { hasText: 'DeBERTa Lens: Compare Models' }).first().click();
  return frameWith(page, '#app.compare-app[data-state="ready"]');
}

describe('DeBERTa Lens: Compare with Another Model (bundled DeBERTa beside the BERT fixture)', { skip: skip ?? false }, () => {
  let lens, page, frame;

  before(async () => {
    lens = await startLens({ name: 'compare', model: 'default', files: { 'sample.txt': `${SAMPLE}\n` } });
    ({ page } = lens);
    installHubModel(lens.server, BERT, 'fixtures/bert_tiny');
    // A keybinding is how a user (or a test) passes the command an argument: a folder whose model type the
    // engine does not read. The workbench reads keybindings.json as it starts: reload it.
    fs.mkdirSync(ROBERTA(lens), { recursive: true });
    fs.writeFileSync(
      path.join(ROBERTA(lens), 'config.json'),
      JSON.stringify({ model_type: 'roberta', hidden_size: 768, num_hidden_layers: 12 }),
    );
    fs.writeFileSync(
      path.join(lens.server.dirs.userData, 'User', 'keybindings.json'),
      JSON.stringify([{ key: 'ctrl+alt+shift+f9', command: 'debertaLens.compareModels', args: { modelPath: ROBERTA(lens) } }]),
    );
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await page.waitForSelector('.explorer-folders-view', { timeout: 60_000 });
    await waitForCommand(page, 'DeBERTa Lens: Select Model');
    await explainLine(page, 'sample.txt');
  });

  after(() => stopWithScreenshot(lens, 'compare'));

  test('the main panel has a Compare models… button that adds no toolbar row', async () => {
    const main = await lensFrame(page);
    await openMore(main);
    const button = main.locator('.toolbar #compare-models');
    assert.equal(await button.count(), 1);
    // It adds no toolbar row: with it the toolbar grows by less than the button's own height (it shares a row;
    // a button is a little taller than the text of the model line beside it).
    const h = await main.locator('.toolbar').evaluate((bar) => {
      const b = bar.querySelector('#compare-models');
      const button = b.getBoundingClientRect().height;
      const withIt = bar.getBoundingClientRect().height;
      b.style.display = 'none';
      const without = bar.getBoundingClientRect().height;
      b.style.display = '';
      return { withIt, without, button };
    });
    assert.ok(h.withIt - h.without < h.button, `toolbar ${h.withIt}px with the ${h.button}px button, ${h.without}px without`);
  });

  test('compare with the BERT fixture from the Hugging Face cache: both heatmaps paint with token labels on both axes', async () => {
    // From the main panel's toolbar button (the palette command is the same command).
    const main = await lensFrame(page);
    // Both sides start at the main panel's layer and head (then go back to 0, where the later checks start).
    await main.locator('#layer').selectOption('1');
    await main.locator('#head').selectOption('1');
    await runCompare(page, 'fixtures/bert_tiny', { open: () => main.locator('#compare-models').click() });
    frame = await fullWidth(page);
    for (const side of ['a', 'b']) {
      assert.equal(await frame.locator(`#layer-${side}`).inputValue(), '1', `side ${side} starts at the main panel's layer`);
      assert.equal(await frame.locator(`#head-${side}`).inputValue(), '1', `side ${side} starts at the main panel's head`);
      await waitPainted(frame, side);
      const painted = await paintCount(frame, side);
      await frame.locator(`#layer-${side}`).selectOption('0');
      await frame.locator(`#head-${side}`).selectOption('0');
      await waitUntil(async () => (await paintCount(frame, side)) > painted, { message: `side ${side} repainted at layer 0 head 0` });
    }
    for (const side of ['a', 'b']) {
      const stats = await waitPainted(frame, side);
      const n = Number(await frame.locator(`canvas#heatmap-${side}`).getAttribute('data-n'));
      assert.ok(n > 10, `side ${side}: ${n} tokens`);
      assert.equal(stats.width, await frame.locator(`canvas#heatmap-${side}`).evaluate((c) => c.width));
      const labels = Number(await frame.locator(`#side-${side} .heatmap-grid`).getAttribute('data-labels'));
      assert.ok(labels >= 2 * Math.min(n, 10), `side ${side}: ${labels} axis labels for ${n} tokens`);
    }
    const titles = await frame.locator('.cmp-title').allTextContents();
    assert.match(titles[0], /default/);
    assert.match(titles[1], /bert_tiny/);
    assert.match(await frame.locator('#side-b .cmp-arch').textContent(), /BERT: absolute positions/);
    await screenshot(page, 'compare-sides');
  });

  test('Export SVG and PNG: both sides as one figure, each with its own title, words and colour bar', async () => {
    for (const format of ['svg', 'png']) {
      await frame.locator(`#cmp-export-${format}`).click();
      const input = page.locator('.quick-input-widget input');
      let proposed = '';
      await waitUntil(
        async () =>
          new RegExp(`^.*compare-default-.*-vs-.*bert_tiny-.*\\.${format}$`).test((proposed = await input.inputValue().catch(() => ''))),
        {
          timeout: 15_000,
          message: `the save dialog proposes compare-….${format} (got "${proposed}")`,
        },
      );
      await page.keyboard.press('Enter');
      const file = path.join(lens.server.dirs.workspace, path.basename(proposed));
      await waitUntil(() => fs.existsSync(file) && fs.statSync(file).size > 0, { timeout: 30_000, message: `${file} written` });
      await page.waitForTimeout(300);
      fs.copyFileSync(file, path.join(RESULTS, `compare-figure.${format}`));
      if (format === 'png') {
        assert.equal(fs.readFileSync(file).readUInt32BE(0), 0x89504e47, 'a PNG file');
        continue;
      }
      const svg = fs.readFileSync(file, 'utf8');
      assert.match(svg, />A: default · probs · L0 H0</);
      assert.match(svg, />B: fixtures\/bert_tiny · probs · L0 H0</);
      assert.equal((svg.match(/fill="none" stroke=/g) ?? []).length, 2, 'two framed maps');
      await drawSvg(page, svg, path.join(RESULTS, 'compare-figure-svg.png'));
    }
  });

  test('from the palette too, both sides start at the main panel’s layer and head', async () => {
    const mainTab = page.getByRole('tab', { name: 'DeBERTa Lens', exact: true });
    const setMain = async (layer, head) => {
      await mainTab.click();
      const main = await lensFrame(page);
      await main.locator('#layer').selectOption(layer);
      await main.locator('#head').selectOption(head);
      // The view reports what it shows after it has drawn it.
      await main.locator('#app:not([data-busy])').waitFor({ state: 'attached', timeout: 30_000 });
      await page.waitForTimeout(500);
    };
    await setMain('1', '2');
    frame = await runCompare(page, 'fixtures/bert_tiny');
    for (const side of ['a', 'b']) {
      assert.equal(await frame.locator(`#layer-${side}`).inputValue(), '1', `side ${side} starts at the main panel's layer`);
      assert.equal(await frame.locator(`#head-${side}`).inputValue(), '2', `side ${side} starts at the main panel's head`);
      await waitPainted(frame, side);
    }
    // Back to layer 0, head 0 everywhere, where the later checks start.
    await setMain('0', '0');
    frame = await runCompare(page, 'fixtures/bert_tiny');
    for (const side of ['a', 'b']) {
      assert.equal(await frame.locator(`#head-${side}`).inputValue(), '0');
      await waitPainted(frame, side);
    }
  });

  test('the alignment strip shows each span with both splits', async () => {
    const groups = frame.locator('#alignment .cmp-group');
    const count = await groups.count();
    assert.ok(count > 15, `${count} aligned spans`);
    const split = await frame.locator('#alignment .cmp-group.split').allTextContents();
    assert.ok(split.length >= 3, `spans split differently: ${split.join(' | ')}`);
    // "naïvely" is cut differently by SentencePiece and by the BERT fixture's WordPiece (lower-cased, accents stripped).
    const texts = await groups.evaluateAll((gs) =>
      gs.map((g) => [g.querySelector('.cmp-a').textContent, g.querySelector('.cmp-b').textContent]),
    );
    assert.ok(
      texts.some(([, b]) => b.includes('[UNK]')),
      'the curly apostrophe is [UNK] on the BERT side',
    );
    assert.ok(
      texts.some(([a, b]) => a !== b && b.includes('##')),
      'WordPiece continuation pieces on side B',
    );
  });

  test('linked hover: a token of side A lights up its span and attended keys on both sides', async () => {
    const chip = frame.locator('#side-a .cmp-strip .tok', { hasText: 'expect' }).first();
    await chip.hover();
    await waitUntil(async () => (await frame.locator('#side-b .cmp-strip .tok.query').count()) > 0, { message: 'side B query tokens' });
    const qa = await frame.locator('#side-a .cmp-strip .tok.query').allTextContents();
    const qb = await frame.locator('#side-b .cmp-strip .tok.query').allTextContents();
    assert.deepEqual(qa, ['expect']);
    assert.equal(qb.join('').replace(/#/g, ''), 'expect', `side B query ${qb}`);
    for (const side of ['a', 'b']) {
      const keys = await frame.locator(`#side-${side} .cmp-strip .tok.key[data-rank]`).count();
      assert.ok(keys >= 3, `side ${side}: ${keys} ranked keys`);
    }
    assert.equal(await frame.locator('#alignment .cmp-group.focus').count(), 1);
    await screenshot(page, 'compare-hover');
    // Hovering a heatmap row of side B lights up side A too.
    await page.mouse.move(0, 0);
    const box = await frame.locator('canvas#heatmap-b').boundingBox();
    await frame.locator('canvas#heatmap-b').hover({ position: { x: box.width / 2, y: box.height / 2 } });
    await waitUntil(async () => (await frame.locator('#side-a .cmp-strip .tok.query').count()) > 0, {
      message: 'side A follows a row of side B',
    });
    // The cell's value on side B, and the same characters' value on side A.
    await waitUntil(async () => /→ .*: probs \d/.test(await frame.locator('#side-b .cmp-readout').textContent()), {
      message: 'side B readout',
    });
    assert.match(
      await frame.locator('#side-a .cmp-readout').textContent(),
      /^".+" → ".+": probs \d|no tokens here cover the same characters/,
    );
    await screenshot(page, 'compare-cell');
  });

  test("BERT side offers layer 0's c2c/c2p/p2c/p2p/rest; the p2p term paints in score units", async () => {
    const terms = await frame.locator('#term-b option').evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(terms, ['c2c', 'c2p', 'p2c', 'p2p', 'rest', 'scores', 'probs']);
    const termsA = await frame.locator('#term-a option').evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(termsA, ['c2c', 'c2p', 'p2c', 'scores', 'probs']);
    const before = await paintCount(frame, 'b');
    await frame.locator('#term-b').selectOption('p2p');
    await waitUntil(async () => (await paintCount(frame, 'b')) > before, { message: 'side B repaints p2p' });
    assert.match(await frame.locator('#side-b .cmp-legend-text').textContent(), /p2p.*score units/);
    await frame.locator('#layer-b').selectOption('1');
    const later = await frame.locator('#term-b option').evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(later, ['scores', 'probs'], 'the split exists in layer 0 only');
    await frame.locator('#term-b').selectOption('probs');
    await frame.locator('#layer-b').selectOption('0');
  });

  test('the pickers survive the panel being hidden and shown again', async () => {
    await frame.locator('#head-a').selectOption('3');
    await frame.locator('#term-b').selectOption('rest');
    await focusTab(page, 'sample.txt');
    await page.locator('.tab', { hasText: 'DeBERTa Lens: Compare Models' }).first().click();
    frame = await frameWith(page, '#app.compare-app[data-state="ready"]');
    await waitPainted(frame, 'b');
    assert.equal(await frame.locator('#head-a').inputValue(), '3');
    assert.equal(await frame.locator('#term-b').inputValue(), 'rest');
    await frame.locator('#head-a').selectOption('0');
    await frame.locator('#term-b').selectOption('probs');
  });

  test('Difference: different tokenizers are pooled over aligned spans; different terms say what to do', async () => {
    await frame.locator('#tab-diff').click();
    await waitPainted(frame, 'diff');
    assert.equal(await frame.locator('#diff-view').getAttribute('data-state'), 'pooled');
    assert.match(await frame.locator('#diff-note').textContent(), /mean over the span's tokens on each side, then A − B/);
    assert.match(await frame.locator('#diff-legend-text').textContent(), /A − B.*red: A higher, blue: B higher/);
    const spans = await frame.locator('#alignment .cmp-group').count();
    assert.equal(Number(await frame.locator('canvas#heatmap-diff').getAttribute('data-n')), spans);
    await screenshot(page, 'compare-diff');
    await frame.locator('#term-b').selectOption('scores');
    await waitUntil(
      async () =>
        /A shows probs and B shows scores: pick the same term on both sides/.test(await frame.locator('#diff-note').textContent()),
      {
        message: 'the different-terms line',
      },
    );
    await frame.locator('#term-b').selectOption('probs');
    await frame.locator('#tab-sides').click();
  });

  test('a model type the engine does not read: one line naming it, and the pair on screen is marked', async () => {
    await focusTab(page, 'sample.txt');
    await page.keyboard.press('Control+Alt+Shift+F9');
    const toast = page.locator('.notifications-toasts .notification-list-item-message', { hasText: 'roberta' }).first();
    await toast.waitFor({ timeout: 30_000 });
    const message = (await toast.textContent()) ?? '';
    assert.match(message, /model_type "roberta", which DeBERTa Lens does not read/);
    assert.ok(!/\n|at \w+ \(/.test(message), `one line, no stack: ${message}`);
    await screenshot(page, 'compare-bad-model');
    // The pair on screen is the previous one: the panel says so (and dims it) until the next pair.
    await page.locator('.tab', { hasText: 'DeBERTa Lens: Compare Models' }).first().click();
    frame = await frameWith(page, '#app.compare-app[data-stale="true"] #stale');
    assert.match(await frame.locator('#stale').textContent(), /^Last comparison failed: .*roberta.*the previous pair/);
    await screenshot(page, 'compare-stale');
    await focusTab(page, 'sample.txt');
  });

  test('the same model on both sides: the difference is cell by cell', async () => {
    await runCompare(page, 'Default model');
    frame = await frameWith(page, '#app.compare-app[data-state="ready"] #cmp-meta:has-text("same tokens on both sides")', {
      timeout: 120_000,
    });
    await frame.locator('#tab-diff').click();
    await waitUntil(async () => (await frame.locator('#diff-view').getAttribute('data-state')) === 'cells', {
      timeout: 30_000,
      message: 'cell-by-cell difference',
    });
    assert.match(await frame.locator('#diff-note').textContent(), /cell by cell/);
    assert.equal(await frame.locator('#stale').count(), 0, 'a new pair clears the mark');
  });

  test('the bundled BERT twin is listed under Embedded: same tokenizer, so the same tokens and a cell-by-cell difference', async () => {
    await focusTab(page, 'sample.txt');
    await runCompare(page, 'BERT twin of the default model');
    frame = await frameWith(page, '#app.compare-app[data-state="ready"] #cmp-meta:has-text("same tokens on both sides")', {
      timeout: 120_000,
    });
    const titles = await frame.locator('.cmp-title').allTextContents();
    assert.match(titles[1], /bert-twin/);
    assert.match(await frame.locator('#side-b .cmp-arch').textContent(), /BERT: absolute positions/);
    await waitPainted(frame, 'b');
    await frame.locator('#tab-diff').click();
    await waitUntil(async () => (await frame.locator('#diff-view').getAttribute('data-state')) === 'cells', {
      timeout: 30_000,
      message: 'cell-by-cell difference',
    });
    await screenshot(page, 'compare-twin');
  });
});

const THEMES = { light: 'Default Light Modern', dark: 'Default Dark Modern' };
describe(
  'Compare Models screenshots from the packaged VSIX (light and dark, ~30 and ~120 tokens)',
  { skip: skip ?? (process.env.E2E_COMPARE_SHOTS ? false : 'set E2E_COMPARE_SHOTS=1') },
  () => {
    let vsix;
    // ~120 pieces: the bundled BERT twin reads at most 128 (its position table stops at its training length).
    const LONG = cut(470);
    before(() => {
      vsix = packageVsix();
    });
    for (const theme of ['light', 'dark']) {
      test(`${theme} theme`, async () => {
        const lens = await startLens({
          name: `compare-${theme}`,
          model: 'default',
          vsix,
          viewport: { width: 1500, height: 1000 },
          settings: { 'workbench.colorTheme': THEMES[theme] },
          files: { 'len30.txt': `${SAMPLE}\n`, 'len120.txt': `${LONG}\n` },
        });
        try {
          installHubModel(lens.server, BERT, 'fixtures/bert_tiny');
          // A pair with different tokenizers (the alignment), then the bundled pair (the same tokens).
          for (const [len, other] of [
            [30, 'fixtures/bert_tiny'],
            [120, 'BERT twin of the default model'],
          ]) {
            await explainLine(lens.page, `len${len}.txt`);
            await runCompare(lens.page, other);
            const f = await fullWidth(lens.page);
            await waitPainted(f, 'a');
            await waitPainted(f, 'b');
            await f.locator('#side-a .cmp-strip .tok').nth(6).hover();
            await lens.page.waitForTimeout(300);
            await screenshot(lens.page, `compare-${theme}-${len}`);
            await f.locator('#tab-diff').click();
            await waitPainted(f, 'diff');
            await screenshot(lens.page, `compare-${theme}-${len}-diff`);
            await f.locator('#tab-sides').click();
          }
        } finally {
          await stopWithScreenshot(lens, `compare-${theme}`);
        }
      });
    }
  },
);
