// Readability checks with the bundled model on real prose, in the light and the dark theme: at ~500 tokens the
// default heatmap shows structure without touching a control, both axes carry token labels, the canvas does not
// move under the pointer, and c2p's strongest neighbour raises the score. Screenshots of each view at 30, 130
// and 500 tokens in both themes go to test-results/e2e/look-*.png (look at them: that is what they are for).
// E2E_LONG=1 adds 2,000 tokens (the heatmap zoomed and fitted, and the views where length matters); it is left
// out of CI for its time.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, openMore, startLens, stopWithScreenshot, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { exportFigure } from './lib/figures.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { focusTab, openFile, runCommand, screenshot, selectAll, waitUntil } from './lib/workbench.mjs';

const PROSE = fs.readFileSync(path.join(import.meta.dirname, 'data', 'prose.txt'), 'utf8');
// The bundled tokenizer makes ~3.7 characters per token of this prose; cut at a word boundary near the target.
const cut = (chars) => PROSE.slice(0, PROSE.lastIndexOf(' ', chars));
const LENGTHS = { 30: cut(110), 130: cut(520), 500: cut(1850) };
const LONG = !!process.env.E2E_LONG;
// The prose four times over, for 2,000 tokens (the bundled model has relative positions only: no length limit).
const PROSE_4 = (PROSE.trim() + '\n\n').repeat(4);
if (LONG) LENGTHS[2000] = PROSE_4.slice(0, PROSE_4.lastIndexOf(' ', 7400));
/** The views shown at 2,000 tokens: the map, the head grid and the views whose pictures depend on the length. */
const LONG_VIEWS = new Set(['heads', 'shares', 'distance', 'lines', 'model']);
const THEMES = { light: 'Default Light Modern', dark: 'Default Dark Modern' };
/**
 * A cell counts as distinguishable from the page when its CIELAB distance to the page background is ≥ 10
 * (ΔE*ab 2.3 is the just-noticeable difference on large patches; 1–2 px cells need several times that).
 * The map must have ≥ 2% such cells: its structure (the diagonals a head favours, the columns of [SEP] and
 * punctuation it collects on) is a few lines of a 500×500 map, 2n–10n cells, 0.4–2%; 2% asks for that and
 * more. The linear 0-to-max ramp this view used to draw gave 0.1–0.2% on this text.
 */
const DELTA_E = 10;
const MIN_SHARE = 0.02;
/**
 * …and at most 60%: past that the low end of the ramp has left the page colour so early that the ~1/n
 * background of a probs row reads as signal, and the structure drowns in it (the dark ramp once gave 96%).
 */
const MAX_SHARE = 0.6;
const ANALYSIS = ['shares', 'ablation', 'distance', 'buckets', 'rollout', 'diff', 'interventions', 'ranking', 'lines', 'model'];
/** Views that draw only after the reader picks something: their first screen is the form. */
const FORMS = new Set(['interventions', 'ranking']);
/** `E2E_FIGURES=1`: also export the heatmap as PNG and SVG figures at 30 and 500 tokens (look-*-figure*.png). */
const FIGURES = !!process.env.E2E_FIGURES;
const skip = extensionMissing();

// The Extension Development Host window ignores workbench.colorTheme (it loads no built-in themes), so the
// extension runs from its packaged VSIX: only then does the dark theme reach the workbench and the webview.
let vsix;
before(() => {
  if (!skip) vsix = packageVsix();
});
after(() => {
  if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
});

/** The theme kind the workbench and the webview actually show: 'dark' | 'light' | the classes found. */
async function themeShown(page, frame) {
  const workbench = await page.locator('.monaco-workbench').first().getAttribute('class');
  const webview = await frame.locator('body').getAttribute('class');
  const kind = (c, dark, light) => (c.split(/\s+/).includes(dark) ? 'dark' : c.split(/\s+/).includes(light) ? 'light' : c);
  return { workbench: kind(workbench ?? '', 'vs-dark', 'vs'), webview: kind(webview ?? '', 'vscode-dark', 'vscode-light') };
}

/** Share of heatmap pixels whose ΔE*ab to the page background is ≥ DELTA_E (computed in the webview). */
async function distinguishableShare(frame) {
  return frame.locator('canvas#heatmap').evaluate((c, dE) => {
    const lab = ([r, g, b]) => {
      const lin = (u) => ((u /= 255) <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4);
      const [R, G, B] = [lin(r), lin(g), lin(b)];
      const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (t * 24389) / 27 / 116 + 16 / 116);
      const x = f((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047);
      const y = f(0.2126 * R + 0.7152 * G + 0.0722 * B);
      const z = f((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883);
      return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
    };
    const bg = getComputedStyle(document.body).backgroundColor.match(/\d+/g).slice(0, 3).map(Number);
    const L0 = lab(bg);
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let hit = 0;
    for (let k = 0; k < data.length; k += 4) {
      const L = lab([data[k], data[k + 1], data[k + 2]]);
      if (Math.hypot(L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]) >= dE) hit++;
    }
    return hit / (data.length / 4);
  }, DELTA_E);
}

/**
 * The default probs scale ranks a row's keys: for query i, its top keys (from the readout's values) and the
 * heatmap's pixel colour at each, and the pairs of weights ≥ 1.5× apart (both above the row's floor, the
 * documented max(top/10^1.5, 1/n)) whose colours are less than ΔE*ab 10 apart.
 */
async function rowRankingFaults(frame, i, n) {
  await frame.locator(`#tokens .tok[data-i="${i}"]`).hover();
  const top = frame.locator(`#readout .nbs span[data-rank][data-query="${i}"]`);
  await top.first().waitFor({ state: 'attached' });
  const keys = (await top.evaluateAll((ss) => ss.map((s) => ({ j: Number(s.dataset.key), v: Number(s.dataset.value) })))).slice(0, 5);
  return frame.locator('canvas#heatmap').evaluate(
    (c, { i, n, keys }) => {
      const lab = ([r, g, b]) => {
        const lin = (u) => ((u /= 255) <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4);
        const [R, G, B] = [lin(r), lin(g), lin(b)];
        const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (t * 24389) / 27 / 116 + 16 / 116);
        const x = f((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047);
        const y = f(0.2126 * R + 0.7152 * G + 0.0722 * B);
        const z = f((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883);
        return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
      };
      const ctx = c.getContext('2d');
      const at = (j) =>
        [...ctx.getImageData(Math.floor(((j + 0.5) * c.width) / n), Math.floor(((i + 0.5) * c.height) / n), 1, 1).data].slice(0, 3);
      const floor = Math.max(Math.max(...keys.map((k) => k.v)) / 10 ** 1.5, 1 / n);
      const faults = [];
      let pairs = 0;
      for (const a of keys)
        for (const b of keys) {
          if (!(a.v >= 1.5 * b.v && b.v > floor)) continue;
          pairs++;
          const [p, q] = [lab(at(a.j)), lab(at(b.j))];
          const d = Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
          if (d < 10) faults.push(`row ${i}: keys ${a.j} (${a.v.toFixed(4)}) and ${b.j} (${b.v.toFixed(4)}) ΔE ${d.toFixed(1)}`);
        }
      return { pairs, faults };
    },
    { i, n, keys },
  );
}

/**
 * Values of the readout that a reader cannot read whole: a pair value (dd) not entirely inside the readout's
 * box or cut by its own box, a neighbour that straddles the box's edge (neighbours past the last line are
 * hidden whole, which is fine).
 */
async function readoutOverflow(frame) {
  return frame.locator('#readout').evaluate((box) => {
    const b = box.getBoundingClientRect();
    const inside = (r) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5 && r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
    const outside = (r) => r.top >= b.bottom - 0.5 || r.bottom <= b.top + 0.5 || r.left >= b.right - 0.5 || r.right <= b.left + 0.5;
    const out = [];
    for (const e of box.querySelectorAll('dd, dt, .nbs > span')) {
      const r = e.getBoundingClientRect();
      const line = e.closest('.nbs')?.getBoundingClientRect();
      const cut = e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== 'inline';
      const shown = e.matches('dd, dt') || (line && !outside(r) && r.top < line.bottom - 0.5);
      if (shown && (!inside(r) || cut))
        out.push(`${e.tagName.toLowerCase()}${e.dataset.kind ? `[${e.dataset.kind}]` : ''} "${e.textContent.slice(0, 40)}"`);
      // A neighbour on the line but cut off at its right end.
      if (line && r.top < line.bottom - 0.5 && r.right > line.right + 0.5 && r.left < line.right)
        out.push(`span "${e.textContent.slice(0, 40)}" cut at the right`);
    }
    return { width: b.width, height: b.height, out };
  });
}

for (const theme of ['light', 'dark']) {
  describe(`DeBERTa Lens readability, ${theme} theme (bundled model, real prose)`, { skip: skip ?? false }, () => {
    let lens, frame, page;
    let lastFile = 'len30.txt';

    before(async () => {
      lens = await startLens({
        name: `look-${theme}`,
        model: 'default',
        viewport: { width: 1400, height: 1000 },
        vsix,
        settings: { 'workbench.colorTheme': THEMES[theme] },
        files: Object.fromEntries(Object.entries(LENGTHS).map(([n, t]) => [`len${n}.txt`, t])),
      });
      ({ frame, page } = lens);
    });
    after(() => stopWithScreenshot(lens, `look-${theme}`));

    async function explain(n) {
      await focusTab(page, lastFile).catch(() => {});
      lastFile = `len${n}.txt`;
      await openFile(page, lastFile);
      await selectAll(page);
      const before = await frame
        .locator('canvas#heatmap')
        .getAttribute('data-n')
        .catch(() => null);
      await runCommand(page, 'DeBERTa Lens: Explain Attention');
      await waitReady(frame, 120_000);
      await waitUntil(
        async () => {
          const now = await frame
            .locator('canvas#heatmap')
            .getAttribute('data-n')
            .catch(() => null);
          return now !== null && now !== before;
        },
        { timeout: 60_000, message: `heatmap for ${n} tokens` },
      );
      await waitHeatmapDrawn(frame);
      return Number(await frame.locator('canvas#heatmap').getAttribute('data-n'));
    }

    test(`screenshots of every view at 30, 130 and 500 tokens${LONG ? ' (and 2,000)' : ''}; the 500-token default map has visible structure and labels`, async () => {
      // Findings are collected, so one run still takes every screenshot; the test fails at the end with all of them.
      const problems = [];
      const check = (ok, message) => {
        if (!ok) problems.push(message);
      };
      for (const target of LONG ? [30, 130, 500, 2000] : [30, 130, 500]) {
        const n = await explain(target);
        assert.ok(Math.abs(n - target) <= target * 0.3, `${n} tokens for target ${target}`);
        if (target === 30)
          assert.deepEqual(await themeShown(page, frame), { workbench: theme, webview: theme }, `the ${theme} theme is applied`);
        await frame.locator('#view-heatmap').click();
        await frame.locator('#term').selectOption('probs');
        await waitHeatmapDrawn(frame);
        if (target === 500) {
          const share = await distinguishableShare(frame);
          console.log(`[look] ${theme}, ${n} tokens, probs layer 0 head 0: ${(share * 100).toFixed(1)}% of cells distinguishable`);
          check(share >= MIN_SHARE, `only ${(share * 100).toFixed(2)}% of cells stand out from the background (need ${MIN_SHARE * 100}%)`);
          check(
            share <= MAX_SHARE,
            `${(share * 100).toFixed(1)}% of cells stand out from the background: the ramp leaves the page colour too early (at most ${MAX_SHARE * 100}%)`,
          );
          // Brightness ranks a row's keys: weights 1.5× apart among a row's top 5 are ≥ ΔE 10 apart.
          let pairs = 0;
          for (const i of [Math.floor(n / 5), Math.floor(n / 2), Math.floor((4 * n) / 5)]) {
            const r = await rowRankingFaults(frame, i, n);
            pairs += r.pairs;
            for (const f of r.faults) check(false, `${theme}: ${f}`);
          }
          console.log(`[look] ${theme}, ${n} tokens: ${pairs} pairs of top-5 weights ≥ 1.5× apart checked for ΔE ≥ 10`);
          check(pairs > 0, 'no pair of top-5 weights 1.5× apart in the rows checked: the ranking check checked nothing');
          const labels = Number(await frame.locator('.heatmap-grid').getAttribute('data-labels'));
          check(labels >= 10, `axis labels drawn: ${labels}`);
          // The whole heatmap is on screen without scrolling the panel (1000-px window).
          const fold = await frame.locator('body').evaluate(() => window.innerHeight);
          const box = await frame.locator('canvas#heatmap').evaluate((c) => c.getBoundingClientRect().toJSON());
          check(box.bottom <= fold, `${n} tokens: heatmap bottom at ${Math.round(box.bottom)} px, below the fold at ${fold} px`);
          // The map takes the free width: at least 70% of the panel's (the controls fold away above it).
          const panel = await frame.locator('body').evaluate((b) => b.clientWidth);
          console.log(
            `[look] ${theme}, ${n} tokens: heatmap ${Math.round(box.width)}×${Math.round(box.height)} px in a ${panel}×${fold} px panel, top at ${Math.round(box.top)} px`,
          );
          check(box.width >= 0.7 * panel, `${n} tokens: the heatmap is ${Math.round(box.width)} px wide in a ${panel} px panel`);
          check(Math.abs(box.width - box.height) < 1, `the heatmap is square (${box.width}×${box.height})`);
        }
        // Point at a token so the strip, readout and overlay show what hovering does.
        await frame.locator(`#tokens .tok[data-i="${Math.floor(n / 3)}"]`).hover();
        await frame.locator('#tokens .tok.neighbour').first().waitFor({ state: 'attached' });
        await frame.locator('#readout dl.pair dd[data-kind]').first().waitFor({ state: 'attached' });
        const ro = await readoutOverflow(frame);
        check(
          !ro.out.length,
          `${n} tokens: the readout (${Math.round(ro.width)}×${Math.round(ro.height)} px) cuts or spills ${ro.out.join(', ')}`,
        );
        await screenshot(page, `look-${theme}-${target}-heatmap`);
        if (FIGURES && target !== 130)
          for (const format of ['png', 'svg']) await exportFigure(lens, format, `look-${theme}-${target}-figure`);
        if (target >= 500) {
          // Zoom in until every row has its label (cells ≥ 12 px): a few clicks at 500 tokens.
          await waitUntil(
            async () => {
              if ((await frame.locator('.heatmap-grid').getAttribute('data-label-stride')) === '1') return true;
              await frame.locator('#zoom-in').click();
              return false;
            },
            { timeout: 20_000, interval: 50, message: 'every token labelled when zoomed in' },
          );
          await frame.locator('#minimap').waitFor({ state: 'visible' });
          await screenshot(page, `look-${theme}-${target}-zoomed`);
          await frame.locator('#zoom-fit').click();
        }
        for (const view of ['heads', ...ANALYSIS].filter((v) => target < 2000 || LONG_VIEWS.has(v))) {
          await frame.locator(`#view-${view}`).click();
          await frame.locator(`#app[data-view="${view}"]:not([data-busy])`).waitFor({ state: 'attached', timeout: 60_000 });
          const drawn =
            view === 'heads'
              ? '#head-grid canvas.thumb'
              : view === 'diff' && target === 30
                ? '#diff-empty'
                : FORMS.has(view)
                  ? '#analysis-view'
                  : `#${view}-view canvas, #${view}-view svg`;
          await frame.locator(drawn).first().waitFor({ state: 'visible', timeout: 60_000 });
          await page.waitForTimeout(300);
          await screenshot(page, `look-${theme}-${target}-${view}`);
          if (view === 'heads' && target === 130) {
            // Two heads side by side, a cell hovered: captions, overlays and the readout's per-head line.
            for (const h of ['0', '1']) await frame.locator(`#head-grid input.cmp[data-head="${h}"]`).check();
            const pane = frame.locator('#compare canvas.compare-canvas').first();
            await pane.waitFor({ state: 'visible', timeout: 30_000 });
            await pane.scrollIntoViewIfNeeded();
            const box = await pane.boundingBox();
            await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.3);
            await frame.locator('#readout dl.pair dd[data-kind]').first().waitFor({ state: 'attached' });
            await screenshot(page, `look-${theme}-130-compare`);
            if (FIGURES) {
              // The two panes as one figure: a map per head, each titled, one colour bar.
              const svg = fs.readFileSync(await exportFigure(lens, 'svg', `look-${theme}-130-compare-figure`), 'utf8');
              for (const h of ['0', '1']) assert.match(svg, new RegExp(`font-weight="bold">head ${h}</text>`));
              assert.equal((svg.match(/fill="none" stroke=/g) ?? []).length, 2, 'two framed maps');
            }
            for (const h of ['0', '1']) await frame.locator(`#head-grid input.cmp[data-head="${h}"]`).uncheck();
          }
        }
        await frame.locator('#view-heatmap').click();
        if (target === 130) {
          await openMore(frame);
          await frame.locator('#export-html').click();
          await frame.locator('#export-form:not([hidden])').waitFor({ state: 'attached' });
          await screenshot(page, `look-${theme}-130-export`);
          await frame.locator('#export-cancel').click();
          // Folded again (it stays as the reader left it): the other pictures show the default toolbar.
          await frame.locator('#more-toggle').click();
          await frame.locator('#more-controls[hidden]').waitFor({ state: 'attached' });
        }
      }
      // A wide panel (the lens group maximised): the text and readout move beside the map, which takes the height.
      const narrow = (await frame.locator('canvas#heatmap').boundingBox()).width;
      await page.locator('.tab', { hasText: 'DeBERTa Lens' }).first().click();
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await waitUntil(async () => (await frame.locator('#app').getAttribute('data-wide')) !== null, {
        timeout: 15_000,
        message: 'the wide layout after maximising the panel',
      });
      await page.waitForTimeout(400);
      const wide = await frame.locator('canvas#heatmap').evaluate((c) => ({
        ...c.getBoundingClientRect().toJSON(),
        panel: document.body.clientWidth,
        fold: window.innerHeight,
      }));
      console.log(
        `[look] ${theme}, wide panel ${wide.panel}×${wide.fold}: heatmap ${Math.round(wide.width)}×${Math.round(wide.height)} px`,
      );
      check(wide.width >= 1.3 * narrow, `a ${wide.panel} px panel draws the map ${Math.round(wide.width)} px wide (narrow: ${narrow})`);
      check(wide.bottom <= wide.fold, `wide: heatmap bottom at ${Math.round(wide.bottom)} px, below the fold at ${wide.fold} px`);
      await screenshot(page, `look-${theme}-${LONG ? 2000 : 500}-wide`);
      await runCommand(page, 'View: Toggle Maximize Editor Group');
      await waitUntil(async () => (await frame.locator('#app').getAttribute('data-wide')) === null, {
        timeout: 15_000,
        message: 'one column again',
      });
      assert.deepEqual(problems, []);
    });

    test('the heatmap does not move while the pointer moves over it', async () => {
      const canvas = frame.locator('canvas#heatmap');
      await canvas.scrollIntoViewIfNeeded();
      const box0 = await canvas.boundingBox();
      for (let k = 0; k < 12; k++) {
        await page.mouse.move(box0.x + box0.width * (0.05 + 0.08 * k), box0.y + box0.height * (0.9 - 0.07 * k));
        await page.waitForTimeout(60);
        assert.deepEqual(await canvas.boundingBox(), box0, 'canvas box unchanged under pointer moves');
      }
    });

    test("c2p: a token's strongest neighbour raises the score (positive value)", async () => {
      await frame.locator('#term').selectOption('c2p');
      await waitHeatmapDrawn(frame);
      for (const i of [5, 40, 200]) {
        await frame.locator(`#tokens .tok[data-i="${i}"]`).hover();
        const top = frame.locator('#readout .pos[data-rank="0"]');
        await waitUntil(async () => (await top.getAttribute('data-query').catch(() => null)) === String(i), {
          message: `readout for query ${i}`,
        });
        const v = Number(await top.getAttribute('data-value'));
        assert.ok(v > 0, `strongest c2p neighbour of #${i} is positive, got ${v}`);
      }
      await screenshot(page, `look-${theme}-c2p-signs`);
    });
  });
}
