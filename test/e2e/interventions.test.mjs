// The Intervention (rerun) and Head ranking tabs in code-server on the bundled model and samples/ablation.md's
// sentence: an intervention and a sweep run from the panel must show what `deberta-lens ablate` prints for the same
// text; the intervened run opens in the Diff against the plain run; Cancel stops a sweep; a cell opens its head;
// Export CSV writes the ranking; the Patching tab's causal trace draws its grid, opens the heatmap and exports CSV.
// Selectors: ./SELECTORS.md ("Intervention", "Head ranking", "Patching").
// Screenshots: test-results/e2e/interventions-*.png.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, stopWithScreenshot, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { REPO_ROOT } from './lib/paths.mjs';
import { openFile, runCommand, screenshot, selectLines, waitUntil } from './lib/workbench.mjs';

// The view shows pieces without their word-boundary marker ("▁him" as "him"), as the CLI's JSON does not.
const { pieceLabel } = await import(path.join(REPO_ROOT, 'out/src/shared/token-layout.js'));

const SENTENCE = fs.readFileSync(path.join(REPO_ROOT, 'samples', 'ablation.md'), 'utf8').split('\n')[0];
const skip = extensionMissing();
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

/** `deberta-lens ablate --model default --text SENTENCE …` as JSON. */
function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, 'ablate', '--model', 'default', '--text', SENTENCE, '--threads', '2', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('DeBERTa Lens interventions and head ranking', { skip: skip ?? false }, () => {
  let lens, frame, page;

  before(async () => {
    lens = await startLens({ name: 'interventions', model: 'default', files: { 'ablation.md': `${SENTENCE}\n` } });
    ({ frame, page } = lens);
    await openFile(page, 'ablation.md');
    await selectLines(page, 1, 1);
    await runCommand(page, 'DeBERTa Lens: Explain Attention');
    await waitReady(frame, 180_000);
  });

  after(() => stopWithScreenshot(lens, 'interventions'));

  test("Intervention: removing c2p of head 1 in layer 1 shows the CLI's before/after, log-prob, rank and KL", async () => {
    const want = cli('--ablate', '1.1:c2p', '--top', '5');
    await frame.locator('#view-interventions').click();
    await frame.locator('#app[data-view="interventions"]').waitFor({ state: 'attached', timeout: 15_000 });
    assert.match(await frame.locator('#view-ablation').textContent(), /Softmax ablation/, 'the re-softmax tab says what it is');
    await frame.locator('#iv-term').selectOption('c2p');
    await frame.locator('#iv-head').selectOption('1');
    await frame.locator('#iv-layer').selectOption('1');
    await frame.locator('#iv-add').click();
    assert.equal(await frame.locator('#iv-entries .chip').getAttribute('data-entry'), '1.1:c2p');
    await frame.locator('#iv-run').click();
    const row = frame.locator('#iv-table tbody tr').first();
    await row.waitFor({ timeout: 60_000 });
    assert.equal(await row.getAttribute('data-position'), String(want.tracked[0].position));
    const lists = row.locator('ol.iv-top');
    const tokens = (k) => lists.nth(k).locator('.tok-text').allTextContents();
    assert.deepEqual(
      await tokens(0),
      want.before[0].top.map((t) => pieceLabel(t.token)),
    );
    assert.deepEqual(
      await tokens(1),
      want.after[0].top.map((t) => pieceLabel(t.token)),
    );
    const t = want.tracked[0];
    const minus = (x, digits) => x.toFixed(digits).replace('-', '−');
    assert.equal(
      (await row.locator('.iv-logprob').textContent()).trim(),
      `log p ${minus(t.before.logprob, 3)} → ${minus(t.after.logprob, 3)}`,
    );
    assert.equal((await row.locator('.iv-rank').textContent()).trim(), `rank ${t.before.rank} → ${t.after.rank}`);
    assert.equal((await row.locator('.iv-kl').textContent()).trim(), want.kl[0].kl.toFixed(4));
    assert.equal(await lists.nth(1).locator('.tok-text').first().textContent(), ',', 'the sample flips "him" to ","');
    await screenshot(page, 'interventions-intervention');
  });

  test('Show intervened run: a banner, the Diff against the plain run, and back', async () => {
    await frame.locator('#iv-show').click();
    await frame.locator('#run-banner').waitFor({ timeout: 60_000 });
    assert.match(await frame.locator('#run-banner').textContent(), /1\.1:c2p removed \(zeroed\)/);
    await frame.locator('#view-diff').click();
    await frame.locator('#layer').selectOption('1');
    await frame.locator('#head').selectOption('1');
    await frame.locator('#term').selectOption('probs');
    await waitHeatmapDrawn(frame, { selector: 'canvas#diff-matrix' });
    assert.match(
      await frame.locator('#diff-summary').textContent(),
      /intervened − plain run, (\d+) of \1 tokens matched/,
      'the same tokens on both sides',
    );
    await screenshot(page, 'interventions-diff');
    await frame.locator('#run-back').click();
    await waitUntil(async () => (await frame.locator('#run-banner').count()) === 0, {
      timeout: 30_000,
      message: 'the banner goes with the plain run',
    });
  });

  test("Head ranking: the grid and ranking equal the CLI's sweep; a cell opens its head in its term", async () => {
    const want = cli('--sweep', 'all');
    await frame.locator('#view-ranking').click();
    await frame.locator('#rk-run').click();
    // The notification says where the sweep is (it may be gone already on this tiny model).
    await page
      .locator('.notifications-toasts .notification-list-item-message', { hasText: 'ranking heads' })
      .first()
      .waitFor({ timeout: 3_000 })
      .then(() => screenshot(page, 'interventions-ranking-progress'))
      .catch(() => {});
    await frame.locator('#rk-grid-c2p').waitFor({ timeout: 120_000 });
    for (const term of want.terms) {
      const cells = await frame.locator(`#rk-grid-${term} td.rk-cell`).allTextContents();
      assert.deepEqual(
        cells,
        want.grid[term].flat().map((x) => x.toFixed(2).replace('-', '−')),
        `${term} grid`,
      );
    }
    const top = await frame.locator('#rk-list li button').evaluateAll((bs) => bs.slice(0, 3).map((b) => b.textContent));
    assert.deepEqual(
      top,
      want.ranking.slice(0, 3).map((c) => `layer ${c.layer} head ${c.head} ${c.term}`),
    );
    assert.match(await frame.locator('#rk-status').textContent(), /followed “him”/);
    await screenshot(page, 'interventions-ranking');
    const best = want.ranking[0];
    await frame.locator(`#rk-grid-${best.term} td[data-layer="${best.layer}"][data-head="${best.head}"]`).click();
    await frame.locator('#app[data-view="heatmap"]').waitFor({ state: 'attached', timeout: 15_000 });
    assert.equal(await frame.locator('#layer').inputValue(), String(best.layer));
    assert.equal(await frame.locator('#head').inputValue(), String(best.head));
    assert.equal(await frame.locator('#term').inputValue(), best.term, 'in the term it was ranked by');
  });

  test('Export CSV writes the ranking; Cancel stops a sweep in flight', async () => {
    await frame.locator('#view-ranking').click();
    // The save dialog (code-server's simple one) proposes head-ranking.csv in the workspace: accept it.
    const target = path.join(lens.server.dirs.workspace, 'head-ranking.csv');
    await frame.locator('#rk-export-csv').click();
    const input = page.locator('.quick-input-widget input');
    await waitUntil(async () => /head-ranking\.csv$/.test(await input.inputValue().catch(() => '')), {
      timeout: 15_000,
      message: 'the save dialog proposes head-ranking.csv',
    });
    await page.keyboard.press('Enter');
    await waitUntil(() => fs.existsSync(target), { timeout: 15_000, message: `${target} written` });
    const lines = fs.readFileSync(target, 'utf8').trim().split('\n');
    assert.equal(lines[0], 'rank,layer,head,term,drop,logprob_after,rank_after,top1_after');
    assert.equal(lines.length, 1 + 4 * 8 * 3);

    await frame.locator('#rk-run').click();
    await frame.locator('#rk-cancel').click();
    await waitUntil(async () => /Cancelled\./.test((await frame.locator('#rk-status').textContent()) ?? ''), {
      timeout: 15_000,
      message: 'the sweep says Cancelled.',
    });
    assert.equal(await frame.locator('#rk-cancel').isHidden(), true);
    // The last finished ranking stays on screen.
    assert.equal(await frame.locator('#rk-grid-c2p td.rk-cell').count(), 32);
  });

  test('Patching: a causal trace of a swapped word draws L + 1 × n cells, a cell opens the heatmap there, Export CSV', async () => {
    await frame.locator('#view-patching').click();
    const corrupt = frame.locator('#pt-corrupt');
    await waitUntil(async () => (await corrupt.inputValue()) === SENTENCE, {
      timeout: 15_000,
      message: 'the corrupted text starts as the explained one',
    });
    // Swap the first word for another: same token count, one token differs.
    const words = SENTENCE.split(' ');
    await corrupt.fill([words[0] === 'The' ? 'A' : 'The', ...words.slice(1)].join(' '));
    await frame.locator('#pt-run').click();
    await frame.locator('#pt-grid-resid').waitFor({ timeout: 120_000 });
    const n = await frame.locator('#pt-grid-resid tbody tr').first().locator('td').count();
    assert.ok(n > 3, `${n} positions`);
    assert.equal(await frame.locator('#pt-grid-resid td.pt-cell').count(), 5 * n, 'layers 0…4 × positions');
    assert.match(await frame.locator('#pt-values').textContent(), /clean.*log p.*corrupt.*log p/s);
    await screenshot(page, 'interventions-patching');
    await frame.locator('#pt-grid-resid td[data-row="2"][data-col="1"]').click();
    await frame.locator('#app[data-view="heatmap"]').waitFor({ state: 'attached', timeout: 15_000 });
    assert.equal(await frame.locator('#layer').inputValue(), '2');
    // Back in the tab the trace is still there; its CSV names the axes.
    await frame.locator('#view-patching').click();
    await frame.locator('#pt-grid-resid').waitFor({ timeout: 15_000 });
    const target = path.join(lens.server.dirs.workspace, 'causal-trace.csv');
    await frame.locator('#pt-export-csv').click();
    const input = page.locator('.quick-input-widget input');
    await waitUntil(async () => /causal-trace\.csv$/.test(await input.inputValue().catch(() => '')), {
      timeout: 15_000,
      message: 'the save dialog proposes causal-trace.csv',
    });
    await page.keyboard.press('Enter');
    await waitUntil(() => fs.existsSync(target), { timeout: 15_000, message: `${target} written` });
    const lines = fs.readFileSync(target, 'utf8').trim().split('\n');
    assert.equal(lines[0], 'layer,position,token,restored,value,target,clean,corrupt');
    assert.equal(lines.length, 1 + 5 * n);
  });
});
