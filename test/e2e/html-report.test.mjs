// The standalone HTML report (`toHtmlReport`) opened from a file:// URL in Chromium: it must make no network
// request, draw the panel's heatmap (axes, the panel's default colour mapping, legend) and strip, answer hover
// with numbers, switch to dark, and save figures. Needs `npm run compile` (out/), `npm run build` (dist/report.js)
// and the fixture model. Screenshots: test-results/e2e/html-report-light.png, html-report-dark.png, and the
// figures html-report-figure.png / .svg (drawn to html-report-figure-svg.png).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, recordConsole } from './lib/browser.mjs';
import { drawSvg } from './lib/figures.mjs';
import { FIXTURES, REPO_ROOT, RESULTS_DIR } from './lib/paths.mjs';
import { canvasStats, isDrawn, waitUntil } from './lib/workbench.mjs';

const require = createRequire(import.meta.url);
const MODEL_JS = path.join(REPO_ROOT, 'out', 'src', 'engine', 'index.js');
const REPORT_JS = path.join(REPO_ROOT, 'out', 'src', 'analysis', 'export', 'html-report.js');
const MODEL_DIR = path.join(FIXTURES, 'deberta', 'v3_tiny');
// A missing build is a failure, not a skip: run.sh compiles first, so a path that is not there is a moved module.
for (const f of [MODEL_JS, REPORT_JS])
  if (!fs.existsSync(f)) throw new Error(`${path.relative(REPO_ROOT, f)} missing: run npm run compile`);
const skip = !fs.existsSync(MODEL_DIR) ? `${MODEL_DIR} missing` : false;

describe('HTML report opened offline from file://', { skip }, () => {
  let browser, page, tmp, requests, consoleLines, result;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-html-report-'));
    const { openModel } = require(MODEL_JS);
    const { toHtmlReport } = require(REPORT_JS);
    const model = await openModel(MODEL_DIR, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 1 });
    const file = path.join(tmp, 'report.html');
    try {
      result = await model.explain({
        text: 'The quick brown fox jumps over the lazy dog. Meanwhile the unbelievably patient dog watches the fox leave the riverbank.',
      });
      // The report computes every layer from the result's kept states: while the model is open.
      fs.writeFileSync(file, await toHtmlReport(result));
    } finally {
      await model.dispose();
    }
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    consoleLines = recordConsole(page, 'html-report');
    requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
  });

  after(async () => {
    await browser?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('makes no http(s) request; only file:, data: or blob:', () => {
    assert.ok(requests.length >= 1, 'the page load itself is recorded');
    const remote = requests.filter((u) => !/^(file|data|blob):/.test(u));
    assert.deepEqual(remote, []);
  });

  test('draws the panel’s heatmap: axes, each row on a log scale by default, the legend whole', async () => {
    const canvas = page.locator('canvas#heatmap');
    let stats;
    await waitUntil(async () => isDrawn((stats = await canvasStats(canvas))), {
      message: `#heatmap drawn (last ${JSON.stringify(stats)})`,
    });
    assert.ok(stats.width >= result.n, `canvas width ${stats.width} ≥ n = ${result.n}`);
    assert.ok(stats.distinctColours > 5, `heatmap has ${stats.distinctColours} colours`);
    assert.ok(isDrawn(await canvasStats(page.locator('canvas#axis-left'))), 'row labels drawn');
    assert.ok(isDrawn(await canvasStats(page.locator('canvas#axis-top'))), 'column labels drawn');
    assert.equal(await page.locator('#scaling').inputValue(), 'auto');
    assert.equal(await page.locator('#legend-min').textContent(), 'row floor');
    assert.match(await page.locator('#legend-label').textContent(), /probs, each row on a log scale/);
    // The legend's line is shown whole (nothing clipped by a fixed height).
    const clipped = await page.locator('#legend-label').evaluate((e) => e.scrollHeight > e.clientHeight + 1);
    assert.equal(clipped, false, 'legend line not clipped');
    // A signed term is linear between robust limits, as in the panel.
    await page.selectOption('#kind', 'c2p');
    await waitUntil(async () => /c2p, centred at 0/.test((await page.locator('#legend-label').textContent()) ?? ''), {
      message: 'c2p legend',
    });
    await page.selectOption('#kind', 'probs');
    assert.deepEqual(
      consoleLines.filter((l) => l.startsWith('[pageerror]') || l.startsWith('[error]')),
      [],
    );
  });

  test('the strip lays out the text (no raw ▁ pieces); hovering a token and a cell shows numbers', async () => {
    const tokens = page.locator('#tokens .tok');
    assert.equal(await tokens.count(), result.n);
    const stripText = await page.locator('#tokens').innerText();
    assert.ok(!stripText.includes('▁'), `no word markers in the strip: ${stripText}`);
    // As in the panel, a space inside a token shows as ␣.
    assert.match(stripText.replace(/␣/g, ' ').replace(/\s+/g, ' '), /The quick brown fox jumps over the lazy dog\./);
    await tokens.nth(2).hover();
    await waitUntil(async () => /^query 2 /.test((await page.locator('#readout').textContent()) ?? ''), { message: 'token readout' });
    // The strip is shaded by that query's row: every token gets its cell's colour.
    const shaded = await tokens.evaluateAll((els) => els.filter((e) => e.style.backgroundColor !== '').length);
    assert.equal(shaded, result.n);
    const box = await page.locator('canvas#heatmap').boundingBox();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.3);
    const text = await waitUntil(
      async () => {
        const t = (await page.locator('#readout').textContent()) ?? '';
        return /→ key \d+/.test(t) && t;
      },
      { message: 'cell readout' },
    );
    const probs = /probs = (-?[\d.]+(?:e[-+]\d+)?)/.exec(text);
    assert.ok(probs, `readout has a probs number: ${text}`);
    const v = Number(probs[1]);
    assert.ok(v >= 0 && v <= 1, `probability ${v} in [0, 1]`);
    assert.match(text, /c2c = -?[\d.]+/);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS_DIR, 'html-report-light.png'), fullPage: true });
  });

  test('dark: the page and the map follow the theme picker', async () => {
    const cornerLight = await page.locator('canvas#heatmap').evaluate((c) => [...c.getContext('2d').getImageData(0, 0, 1, 1).data]);
    await page.selectOption('#theme', 'dark');
    assert.equal(await page.locator('body').getAttribute('class'), 'vscode-dark');
    const background = await page.locator('body').evaluate((b) => getComputedStyle(b).backgroundColor);
    assert.equal(background, 'rgb(31, 31, 31)');
    const corner = await page.locator('canvas#heatmap').evaluate((c) => [...c.getContext('2d').getImageData(0, 0, 1, 1).data]);
    assert.notDeepEqual(corner, cornerLight, 'the map is repainted with the dark ramp');
    await page.locator('#tokens .tok').nth(5).hover();
    await page.screenshot({ path: path.join(RESULTS_DIR, 'html-report-dark.png'), fullPage: true });
    await page.selectOption('#theme', 'light');
  });

  test('figures: SVG with vector text and word labels, PNG at the chosen width and dpi', async () => {
    const save = async (id) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator(id).click()]);
      const file = path.join(tmp, download.suggestedFilename());
      await download.saveAs(file);
      return file;
    };
    const svgFile = await save('#save-svg');
    assert.match(path.basename(svgFile), /-probs-L\d+-H0\.svg$/);
    const svg = fs.readFileSync(svgFile, 'utf8');
    assert.match(svg, /^<svg /);
    assert.ok(svg.includes(`${result.model.name} · probs · layer ${result.layers[0]} · head 0`), 'title');
    const labels = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.ok(
      ['quick', 'brown', 'unbelievably', 'riverbank.'].some((w) => labels.includes(w)),
      `whole-word labels as text: ${labels.join(' | ')}`,
    );
    assert.match(svg, /each row on a log scale/, 'caption');
    fs.copyFileSync(svgFile, path.join(RESULTS_DIR, 'html-report-figure.svg'));
    await drawSvg(page, svg, path.join(RESULTS_DIR, 'html-report-figure-svg.png'), 113.4, 'the report’s SVG');
    await page.fill('#fig-width', '12');
    await page.fill('#fig-dpi', '150');
    const png = fs.readFileSync(await save('#save-png'));
    assert.equal(png.readUInt32BE(0), 0x89504e47, 'PNG signature');
    assert.equal(png.readUInt32BE(16), Math.round((12 / 2.54) * 150), 'width = 12 cm at 150 dpi');
    fs.writeFileSync(path.join(RESULTS_DIR, 'html-report-figure.png'), png);
  });
});
