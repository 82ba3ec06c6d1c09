// Fill-mask in the real UI with the bundled model (it carries its masked-LM head): the panel's Predictions section
// shows for every [MASK] what `deberta-lens predict` prints (ids, pieces, probabilities to 3 decimals); "what would
// the model put here?" from the panel's button, the strip's context menu and the command on the editor's cursor
// masks a token and shows the CLI's answer for that position with the original token's probability and rank; the
// editor hover on a [MASK] lists the top tokens. Layout: each row's token, bar and percentage never overlap; at
// ~500 tokens in a 1000-px window the section is one summary line and the heatmap starts on screen.
// Light theme from the checkout, dark from the packaged VSIX (themes apply to an installed extension only).
// Screenshots: test-results/e2e/predictions-{light,dark}-{30,500}*.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, stopWithScreenshot, waitReady } from './lib/lens.mjs';
import { REPO_ROOT } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { cliAblate, cliPredict, cards, assertSame, rowOverlaps, hoverEditorText, explainFile } from './lib/predictions.mjs';
import { focusTab, goToLine, openFile, pickMenuItem, runCommand, screenshot, selectAll, waitUntil } from './lib/workbench.mjs';

const SHORT = 'She opened the [MASK] and looked out into the dark night. He put his [MASK] in his pocket.';
const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
// ~500 tokens of prose (as look.test.mjs cuts it) with one [MASK] early on.
const LONG = PROSE.slice(0, PROSE.lastIndexOf(' ', 1850)).replace(' eye ', ' [MASK] ');
const VIEWPORT = { width: 1400, height: 1000 };
// samples/ablation.md: removing c2p of head 1 in layer 1 flips the bundled model's "him" to ",".
const FLIP = 'He closed the door behind [MASK] and sat down.';
const ITEM = 'What Would the Model Put Here?';
const skip = extensionMissing();

// E2E_THEMES=light runs one theme (while working on the layout); both by default.
for (const theme of (process.env.E2E_THEMES ?? 'light,dark').split(',').filter(Boolean)) {
  describe(`Predictions in the panel and the editor, ${theme} theme`, { skip: skip ?? false }, () => {
    let lens, frame, page, vsix;

    before(async () => {
      // Dark: from the packaged VSIX, the only way the workbench applies another theme to the webview.
      if (theme === 'dark') vsix = packageVsix();
      lens = await startLens({
        name: `predictions-${theme}`,
        model: 'default',
        viewport: VIEWPORT,
        vsix,
        settings: { 'workbench.colorTheme': theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' },
        files: { 'fill.txt': SHORT, 'long.txt': LONG, 'flip.txt': FLIP },
      });
      ({ frame, page } = lens);
    });
    after(async () => {
      await stopWithScreenshot(lens, `predictions-${theme}`);
      if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
    });

    test('every [MASK]: the panel lists what `deberta-lens predict` prints, open under the strip, rows laid out apart', async () => {
      await explainFile(page, frame, 'fill.txt');
      const want = cliPredict(SHORT).predictions;
      assert.equal(want.length, 2, 'the CLI finds both [MASK]s');
      const got = (await cards(frame)).filter((c) => c.source === 'input');
      assert.equal(got.length, 2, 'a card per [MASK]');
      got.forEach((c, k) => assertSame(c, want[k], `[MASK] #${want[k].position}`));
      assert.equal(got[0].top[0].shown, 'door', 'pieces read without the word-boundary marker');
      assert.equal(await frame.locator('#predictions').getAttribute('data-open'), 'true', 'open at ~30 tokens');
      assert.deepEqual(await rowOverlaps(frame), []);
      assert.match(await frame.locator('#predictions-summary').textContent(), /2 \[MASK\] · top 5: #\d+ → door \d+\.\d%/);
      // The strip is first, then the section, then the heatmap.
      const [strip, section, map] = await Promise.all(
        ['#tokens', '#predictions', 'canvas#heatmap'].map((s) => frame.locator(s).boundingBox()),
      );
      assert.ok(
        strip.y + strip.height <= section.y + 1 && section.y + section.height <= map.y,
        'strip, predictions, heatmap from top to bottom',
      );
      await screenshot(page, `predictions-${theme}-30`);
    });

    test('the panel button masks the hovered token: its top-5, and the original token’s probability and rank, as the CLI says', async () => {
      const p = 2; // "opened"
      await frame.locator(`#tokens .tok[data-i="${p}"]`).hover();
      const ask = frame.locator('#predict-token');
      await waitUntil(async () => (await ask.getAttribute('data-target')) === String(p), {
        message: 'the button targets the hovered token',
      });
      await ask.click();
      const card = frame.locator(`#predictions .pred-card[data-source="masked"][data-position="${p}"]`);
      await card.waitFor({ state: 'attached', timeout: 60_000 });
      const want = cliPredict(SHORT, [p]).predictions.find((q) => q.position === p);
      assertSame(
        (await cards(frame)).find((c) => c.position === p),
        want,
        `masked #${p}`,
      );
      assert.match(await card.locator('.pred-original').textContent(), /^was “opened” \d+(\.\d+)?%, rank \d+$/);
      assert.deepEqual(await rowOverlaps(frame), []);
      await screenshot(page, `predictions-${theme}-30-masked`);
    });

    test('the strip’s context menu asks the same about a token', async () => {
      const p = 11; // a token of the second sentence
      await frame.locator(`#tokens .tok[data-i="${p}"]`).click({ button: 'right' });
      await pickMenuItem(page, ITEM, { menu: "the strip's context menu" });
      await frame
        .locator(`#predictions .pred-card[data-source="masked"][data-position="${p}"]`)
        .waitFor({ state: 'attached', timeout: 60_000 });
      const want = cliPredict(SHORT, [p]).predictions.find((q) => q.position === p);
      assertSame(
        (await cards(frame)).find((c) => c.position === p),
        want,
        `masked #${p} from the menu`,
      );
    });

    test('the command on the editor’s cursor asks about the token under it; the hover on a [MASK] lists its top tokens', async () => {
      await focusTab(page, 'fill.txt');
      await goToLine(page, 1, SHORT.indexOf('looked') + 2);
      await runCommand(page, `DeBERTa Lens: ${ITEM}`);
      const tokens = cliPredict(SHORT).tokens;
      const p = tokens.findIndex((t) => t.token === '▁looked');
      await frame
        .locator(`#predictions .pred-card[data-source="masked"][data-position="${p}"]`)
        .waitFor({ state: 'attached', timeout: 60_000 });
      const want = cliPredict(SHORT, [p]).predictions.find((q) => q.position === p);
      assertSame(
        (await cards(frame)).find((c) => c.position === p),
        want,
        `masked #${p} from the editor`,
      );

      // Back to the line's start, so the first [MASK] is on screen (the cursor move scrolled the line).
      await goToLine(page, 1, 1);
      await hoverEditorText(page, '[MASK]', 0);
      const hover = page.locator('.monaco-hover', { hasText: 'what the model puts at' }).first();
      await hover.waitFor({ state: 'visible', timeout: 15_000 }).catch(async (e) => {
        await screenshot(page, `predictions-${theme}-editor-hover-missing`);
        throw e;
      });
      const text = await hover.textContent();
      const first = cliPredict(SHORT).predictions[0];
      assert.match(text, new RegExp(`\\[MASK\\] #${first.position}`));
      assert.ok(text.includes('door'), `the hover lists the top token: ${text}`);
      assert.ok(text.includes(`${(first.top[0].prob * 100).toFixed(1)}%`), `with its probability: ${text}`);
      await screenshot(page, `predictions-${theme}-editor-hover`);
      await page.mouse.move(5, 5);
    });

    test('~500 tokens in a 1000-px window: one summary line, the heatmap starts on screen; opening shows the card', async () => {
      await focusTab(page, 'fill.txt').catch(() => {});
      await explainFile(page, frame, 'long.txt');
      const n = Number(await frame.locator('canvas#heatmap').getAttribute('data-n'));
      assert.ok(n >= 400 && n <= 512, `${n} tokens`);
      const section = frame.locator('#predictions');
      assert.equal(await section.getAttribute('data-open'), 'false', 'collapsed');
      const head = await section.boundingBox();
      assert.ok(head.height < 40, `one line: ${head.height}px`);
      assert.match(await frame.locator('#predictions-summary').textContent(), /1 \[MASK\] · top 5: #\d+ → /);
      const map = await frame.locator('canvas#heatmap').boundingBox();
      assert.ok(map.y + 100 < VIEWPORT.height, `the heatmap starts on screen (top at ${map.y}px)`);
      await screenshot(page, `predictions-${theme}-500`);
      const want = cliPredict(LONG).predictions;
      await frame.locator('#predictions-toggle').click();
      assert.equal(await section.getAttribute('data-open'), 'true');
      assertSame((await cards(frame))[0], want[0], 'the [MASK] of the long text');
      assert.deepEqual(await rowOverlaps(frame), []);
      await screenshot(page, `predictions-${theme}-500-open`);
      await frame.locator('#predictions-toggle').click();
    });

    test(
      'an intervened run shown in the panel: the predictions after the intervention (as `deberta-lens ablate`), then back',
      { skip: theme !== 'light' },
      async () => {
        await focusTab(page, 'long.txt').catch(() => {});
        await explainFile(page, frame, 'flip.txt');
        const want = cliAblate(FLIP, '1.1:c2p');
        assert.equal(want.after[0].top[0].token, ',', 'the sample flips the first choice');
        await frame.locator('#view-interventions').click();
        await frame.locator('#iv-term').selectOption('c2p');
        await frame.locator('#iv-head').selectOption('1');
        await frame.locator('#iv-layer').selectOption('1');
        await frame.locator('#iv-add').click();
        await frame.locator('#iv-run').click();
        await frame.locator('#iv-table tbody tr').first().waitFor({ timeout: 60_000 });
        await frame.locator('#iv-show').click();
        await frame.locator('#run-banner').waitFor({ timeout: 60_000 });
        const summary = frame.locator('#predictions-summary');
        await waitUntil(async () => (await summary.textContent()).startsWith('after the intervention'), {
          timeout: 30_000,
          message: 'the section follows the intervened run',
        });
        const after = (await cards(frame)).filter((c) => c.source === 'input');
        assertSame(after[0], want.after[0], 'after the intervention');
        assert.equal(await frame.locator('#predict-token').isDisabled(), true, 'tokens are asked of the plain run');
        await screenshot(page, `predictions-${theme}-intervened`);
        await frame.locator('#run-back').click();
        await waitUntil(async () => !(await summary.textContent()).startsWith('after the intervention'), {
          timeout: 30_000,
          message: 'back to the plain run',
        });
        // The plain run's cards read through the bundled model's Enhanced Mask Decoder, as predict does (ablate, like
        // an intervened run, reads the plain head).
        const plain = cliPredict(FLIP).predictions[0];
        let back;
        await waitUntil(async () => (back = (await cards(frame)).find((c) => c.source === 'input')) !== undefined, {
          timeout: 30_000,
          message: 'the plain run’s card',
        });
        assertSame(back, plain, 'the plain run again');
        await frame.locator('#view-heatmap').click();
      },
    );
  });
}

// The test fixtures' heads (test/data/fixtures/deberta): a v3 discriminator with only its replaced-token-detection
// head gets the band and no fill-mask; a bare encoder gets one line saying why there is nothing to show.
for (const [name, check] of [
  [
    'v3_tiny_rtd',
    async (frame) => {
      const band = frame.locator('canvas#rtd-band');
      await band.waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(
        Number(await band.evaluate((c) => c.width)),
        Number(await frame.locator('canvas#heatmap').getAttribute('data-n')),
        'one cell per token',
      );
      assert.match(await frame.locator('#predictions-summary').textContent(), /replaced\? highest \d.*no masked-LM head/);
      const box = await band.boundingBox();
      await band.hover({ position: { x: box.width * 0.5, y: box.height / 2 } });
      assert.match(await frame.locator('#rtd-readout').textContent(), /^#\d+ “.*”: P\(replaced\) = \d/);
      assert.equal(await frame.locator('#predict-token').isHidden(), true, 'nothing to ask without a masked-LM head');
    },
  ],
  [
    'v2_tiny',
    async (frame) => {
      assert.equal(await frame.locator('#predictions').getAttribute('data-state'), 'none');
      assert.equal(await frame.locator('#predictions').getAttribute('data-open'), 'false');
      assert.match(
        await frame.locator('#predictions-summary').textContent(),
        /^v2_tiny has no prediction head \(no cls\.predictions\.\*.*\): it was saved as a bare encoder/,
      );
      assert.equal(await frame.locator('#predictions-toggle').isDisabled(), true);
    },
  ],
]) {
  describe(`Predictions with the ${name} fixture`, { skip: skip ?? false }, () => {
    let lens;
    before(async () => {
      lens = await startLens({
        name: `predictions-${name}`,
        model: path.join(REPO_ROOT, 'test', 'data', 'fixtures', 'deberta', name),
        viewport: VIEWPORT,
        files: { 'tiny.txt': 'a tiny [MASK] for a tiny random model' },
      });
    });
    after(() => stopWithScreenshot(lens, `predictions-${name}`));

    test(
      name === 'v2_tiny' ? 'one line says why there is nothing to show' : 'a “replaced?” band, one cell per token, and no fill-mask',
      async () => {
        const { page, frame } = lens;
        await openFile(page, 'tiny.txt');
        await selectAll(page);
        await runCommand(page, 'DeBERTa Lens: Explain Attention');
        await waitReady(frame, 120_000);
        await frame.locator('#predictions:not([data-state="pending"])').waitFor({ state: 'attached', timeout: 60_000 });
        await check(frame);
        await screenshot(page, `predictions-${name}`);
      },
    );
  });
}
