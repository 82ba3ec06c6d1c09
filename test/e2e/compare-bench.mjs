// Compare Models benchmark in code-server + Chromium: the bundled DeBERTa model beside a BERT of the same size
// (random weights, the BERT fixture's vocabulary; picked from the workbench's Hugging Face cache). Prints one JSON object and writes test-results/e2e/compare-bench.json.
// Per target length (~128 and ~512 DeBERTa tokens), twice (cold: the BERT model opens and its graph may be
// built; warm: both models open):
//   first_paint_ms   Enter on the model in the pick → both sides' heatmaps drawn (node clock, 25 ms polling)
//   explain_ms       each side's explain time as the panel shows it
//   tokens           each side's token count
// No assertion on times: the numbers are for reading.
// Usage: npm run bench:compare [-- --lengths 128,512]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { frameWith, installHubModel, lensFrame } from './lib/compare.mjs';
import { startLens } from './lib/lens.mjs';
import { FIXTURES, RESULTS_DIR } from './lib/paths.mjs';
import { canvasStats, focusTab, isDrawn, openFile, runCommand, selectLines, waitUntil } from './lib/workbench.mjs';

const arg = process.argv.indexOf('--lengths');
const lengths = (arg > 0 ? process.argv[arg + 1] : '128,512').split(',').map(Number);
const WORDS = 'the model reads every token and attends to its neighbours by content and by relative position so that'.split(' ');
// Texts of these words cut where the bundled tokenizer reaches the target count ([CLS] and [SEP] included).
const { buildModelInput, loadTokenizer } = await import(path.resolve('out/src/engine/tokenizer/index.js'));
const { writeBertCheckpoint } = await import(path.resolve('out/tools/bench/bert-geometry.js'));
const spm = await loadTokenizer('models/default');
function textOfTokens(n) {
  const words = [];
  while (buildModelInput(spm, words.join(' ')).tokens.length < n) words.push(WORDS[words.length % WORDS.length]);
  return words.join(' ');
}
const texts = Object.fromEntries(lengths.map((n) => [n, textOfTokens(n)]));
// The BERT fixture reads 64 tokens at most: beside it at 128–512 tokens sits a random BERT of the bundled model's
// size with the fixture's vocabulary plus these words (tools/bench/bert-geometry.ts).
const bertDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-compare-bert-'));
writeBertCheckpoint(bertDir, path.join(FIXTURES, 'bert', 'bert_tiny'), Object.values(texts));

const lens = await startLens({
  name: 'compare-bench',
  model: 'default',
  files: Object.fromEntries(lengths.map((n) => [`len${n}.txt`, `${texts[n]}\n`])),
});
const { page } = lens;
const runs = [];
try {
  installHubModel(lens.server, bertDir, 'bench/bert-4x256-random');
  for (const n of lengths) {
    await openFile(page, `len${n}.txt`).catch(() => focusTab(page, `len${n}.txt`));
    await selectLines(page, 1, 1);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await lensFrame(page, { timeout: 120_000 });
    for (const round of ['cold', 'warm']) {
      // Mark the panel's current page, so that only the new pair's paint counts.
      for (const f of page.frames())
        await f.evaluate(() => document.querySelectorAll('.cmp-side').forEach((s) => (s.dataset.old = '1'))).catch(() => {});
      await runCommand(page, 'DeBERTa Lens: Compare with Another Model');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'bench/bert-4x256-random' }).first();
      await row.waitFor({ timeout: 30_000 });
      await page.locator('.quick-input-widget input').fill('bench/bert-4x256-random');
      await row.waitFor({ timeout: 10_000 });
      const t0 = Date.now();
      await page.keyboard.press('Enter');
      const frame = await frameWith(page, '#app.compare-app[data-state="ready"] .cmp-side:not([data-old])', { timeout: 300_000 });
      for (const side of ['a', 'b']) {
        await waitUntil(
          async () => {
            const s = await canvasStats(frame.locator(`#side-${side}:not([data-old]) canvas#heatmap-${side}`)).catch(() => null);
            return s && isDrawn(s);
          },
          { timeout: 300_000, interval: 25, message: `side ${side} painted` },
        );
      }
      const firstPaint = Date.now() - t0;
      const meta = await frame.locator('.cmp-title .meta').allTextContents();
      const num = (s, re) => Number(re.exec(s)?.[1]);
      runs.push({
        target_tokens: n,
        round,
        first_paint_ms: firstPaint,
        tokens: { deberta: num(meta[0], /(\d+) tokens/), bert: num(meta[1], /(\d+) tokens/) },
        explain_ms: { deberta: num(meta[0], /(\d+) ms/), bert: num(meta[1], /(\d+) ms/) },
      });
      await focusTab(page, `len${n}.txt`);
    }
  }
} finally {
  await lens.stop();
  fs.rmSync(bertDir, { recursive: true, force: true });
}
const out = {
  bench: 'compare-first-paint',
  models: {
    a: 'models/default (bundled DeBERTa, 4 layers × 256 × 8 heads)',
    b: "random BERT, 4 layers × 256 × 8 heads, the bert_tiny fixture's WordPiece vocabulary + the text's words (the fixture itself reads 64 tokens at most)",
  },
  machine: { cpus: os.cpus().length, loadavg_1m: Number(os.loadavg()[0].toFixed(2)) },
  runs,
};
fs.mkdirSync(RESULTS_DIR, { recursive: true });
fs.writeFileSync(path.join(RESULTS_DIR, 'compare-bench.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(out, null, 2));
