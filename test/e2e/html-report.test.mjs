// The standalone HTML report (`toHtmlReport`) opened from a file:// URL in Chromium: it must make no network
// request, draw a non-blank heatmap and answer hover with numbers. Needs `npm run compile` (out/) and the
// fixture model. Screenshot: test-results/e2e/html-report.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, recordConsole } from './lib/browser.mjs';
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
      result = await model.explain({ text: 'The quick brown fox jumps over the lazy dog.' });
      // The report computes every layer from the result's kept states: while the model is open.
      fs.writeFileSync(file, await toHtmlReport(result));
    } finally {
      await model.dispose();
    }
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
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

  test('draws a non-blank heatmap of n × n cells', async () => {
    const canvas = page.locator('canvas#heat');
    let stats;
    await waitUntil(async () => isDrawn((stats = await canvasStats(canvas))), { message: `#heat drawn (last ${JSON.stringify(stats)})` });
    assert.ok(stats.width >= result.n && stats.width % result.n === 0, `canvas width ${stats.width} is a multiple of n = ${result.n}`);
    assert.ok(stats.distinctColours > 5, `heatmap has ${stats.distinctColours} colours`);
    assert.match(await page.locator('#legend').textContent(), /probs \(max = [\d.]+\)/);
    assert.deepEqual(
      consoleLines.filter((l) => l.startsWith('[pageerror]') || l.startsWith('[error]')),
      [],
    );
  });

  test('hovering a token and a cell shows numbers in the readout', async () => {
    const tokens = page.locator('#strip .tok');
    assert.equal(await tokens.count(), result.n);
    await tokens.nth(2).hover();
    await waitUntil(async () => /^query 2 /.test((await page.locator('#readout').textContent()) ?? ''), { message: 'token readout' });
    // The strip is shaded by that query's attention: several tokens get a background colour.
    const shaded = await tokens.evaluateAll((els) => els.filter((e) => e.style.background !== '').length);
    assert.equal(shaded, result.n);
    const box = await page.locator('canvas#heat').boundingBox();
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
    await page.screenshot({ path: path.join(RESULTS_DIR, 'html-report.png'), fullPage: true });
  });
});
