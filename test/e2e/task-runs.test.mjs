// The Intervention and Head ranking tabs on a fine-tuned classifier (models/default-pairs, "does B continue A?"),
// in the light and the dark theme: a sentence pair (typed with [SEP], the same ids as a pair for DeBERTa-v3) is
// explained; an intervention shows every label's logit and score before → after as `deberta-lens ablate` prints
// them; the Head ranking ranks by a label picked by name, as the CLI's `--sweep all --target label:NAME`, with
// "Why this label?" on top (a link opens the head with [CLS] pinned); Export CSV names the target.
// Screenshots: test-results/e2e/task-runs-<theme>-*.png (look at them).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, stopWithScreenshot, waitReady } from './lib/lens.mjs';
import { REPO_ROOT } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { openFile, runCommand, screenshot, selectLines, waitUntil } from './lib/workbench.mjs';

const PAIRS = path.join(REPO_ROOT, 'models', 'default-pairs');
const TEXT = 'The kettle began to whistle. [SEP] She poured the water into the teapot.';
const THEMES = { light: 'Default Light Modern', dark: 'Default Dark Modern' };
const skip = extensionMissing();
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const minus = (x, digits) => x.toFixed(digits).replace('-', '−');

/** `deberta-lens ablate --model default-pairs --text TEXT …` as JSON. */
function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, 'ablate', '--model', PAIRS, '--text', TEXT, '--threads', '2', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// The Extension Development Host ignores workbench.colorTheme: the extension runs from its VSIX (as look.test.mjs).
const themes = (process.env.E2E_THEMES ?? 'light').split(',').filter(Boolean);
let vsix;
before(() => {
  if (!skip && themes.includes('dark')) vsix = packageVsix();
});
after(() => {
  if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
});

// E2E_THEMES=light,dark for both (the dark one installs a packaged VSIX); CI runs light.
for (const theme of themes) {
  describe(`DeBERTa Lens runs on a pair classifier, ${theme} theme`, { skip: skip ?? false }, () => {
    let lens, frame, page;

    before(async () => {
      lens = await startLens({
        name: `task-runs-${theme}`,
        model: PAIRS,
        vsix: theme === 'dark' ? vsix : undefined,
        viewport: { width: 1400, height: 1000 },
        settings: { 'workbench.colorTheme': THEMES[theme] },
        files: { 'pair.md': `${TEXT}\n` },
      });
      ({ frame, page } = lens);
      await openFile(page, 'pair.md');
      await selectLines(page, 1, 1);
      await runCommand(page, 'DeBERTa Lens: Explain Attention');
      await waitReady(frame, 180_000);
    });

    after(() => stopWithScreenshot(lens, `task-runs-${theme}`));

    test("Intervention: every label's logit and score before → after, as the CLI's ablate", async () => {
      const want = cli('--ablate', '0.*:all');
      await frame.locator('#view-interventions').click();
      await frame.locator('#app[data-view="interventions"]').waitFor({ state: 'attached', timeout: 15_000 });
      await waitUntil(async () => await frame.locator('#iv-at').isHidden(), { timeout: 15_000, message: 'no [MASK] position to pick' });
      await frame.locator('#iv-term').selectOption('all');
      await frame.locator('#iv-head').selectOption('*');
      await frame.locator('#iv-layer').selectOption('0');
      await frame.locator('#iv-add').click();
      await frame.locator('#iv-run').click();
      await frame.locator('#ts-table').waitFor({ timeout: 60_000 });
      const before = want.before.classification;
      const afterRun = want.after.classification;
      const rows = frame.locator('#ts-table tbody tr');
      assert.equal(await rows.count(), 2);
      for (let k = 0; k < 2; k++) {
        const row = rows.nth(k);
        assert.equal(await row.getAttribute('data-label'), before.labels[k].label);
        assert.equal(
          (await row.locator('td').first().textContent()).trim(),
          `${minus(before.labels[k].logit, 3)} → ${minus(afterRun.labels[k].logit, 3)}`,
        );
      }
      const predicted = frame.locator(`#ts-table tr[data-label="${afterRun.predicted.label}"]`);
      assert.match(await predicted.locator('th').textContent(), /● predicted( after)?$/);
      assert.match(await frame.locator('#ts-summary').textContent(), /^Decision (unchanged|changed): /);
      await screenshot(page, `task-runs-${theme}-intervention`);
    });

    test('Head ranking: by the label picked by name, as the CLI; Why this label? opens a head with [CLS] pinned', async () => {
      const want = cli('--sweep', 'all', '--target', 'label:not_next');
      await frame.locator('#view-ranking').click();
      const label = frame.locator('#rk-label');
      await label.waitFor({ timeout: 30_000 });
      assert.deepEqual(await label.locator('option').evaluateAll((os) => os.map((o) => o.value)), ['', '0', '1']);
      await label.selectOption('0');
      await frame.locator('#rk-run').click();
      await frame.locator('#rk-grid-c2p').waitFor({ timeout: 120_000 });
      // The view's rule for a weak classifier's small drops: up to four decimals (gridDigits in why-label-model.ts).
      const largest = Math.max(...want.ranking.map((c) => Math.abs(c.drop)));
      const digits = Math.max(2, Math.min(4, 1 - Math.floor(Math.log10(largest))));
      for (const term of want.terms) {
        const cells = await frame.locator(`#rk-grid-${term} td.rk-cell`).allTextContents();
        assert.deepEqual(
          cells,
          want.grid[term].flat().map((x) => minus(x, digits)),
          `${term} grid`,
        );
      }
      assert.match(await frame.locator('#rk-status').textContent(), /Following label “not_next”/);
      assert.match(await frame.locator('#why-label h3').textContent(), /^Why label “not_next”/);
      const why = frame.locator('#why-list li');
      assert.equal(await why.count(), 5);
      const byMove = [...want.ranking].sort((a, b) => Math.abs(b.drop) - Math.abs(a.drop))[0];
      const first = why.first().locator('button.why-open');
      assert.equal(await first.getAttribute('data-layer'), String(byMove.layer));
      assert.equal(await first.getAttribute('data-head'), String(byMove.head));
      await waitUntil(async () => /reads 0 “\[CLS\]”|reads \d+ “/.test((await why.first().locator('.why-reads').textContent()) ?? ''), {
        timeout: 30_000,
        message: 'the [CLS] row’s top keys are shown',
      });
      await screenshot(page, `task-runs-${theme}-ranking`);
      await first.click();
      await frame.locator('#app[data-view="heatmap"]').waitFor({ state: 'attached', timeout: 15_000 });
      assert.equal(await frame.locator('#layer').inputValue(), String(byMove.layer));
      assert.equal(await frame.locator('#head').inputValue(), String(byMove.head));
      await frame.locator('#tokens .tok.pinned[data-i="0"]').waitFor({ timeout: 15_000 });
      await screenshot(page, `task-runs-${theme}-why-head`);
    });

    test('Export CSV names the target on every row', async () => {
      await frame.locator('#view-ranking').click();
      const target = path.join(lens.server.dirs.workspace, 'head-ranking.csv');
      fs.rmSync(target, { force: true });
      await frame.locator('#rk-export-csv').click();
      const input = page.locator('.quick-input-widget input');
      await waitUntil(async () => /head-ranking\.csv$/.test(await input.inputValue().catch(() => '')), {
        timeout: 15_000,
        message: 'the save dialog proposes head-ranking.csv',
      });
      await page.keyboard.press('Enter');
      await waitUntil(() => fs.existsSync(target), { timeout: 15_000, message: `${target} written` });
      const lines = fs.readFileSync(target, 'utf8').trim().split('\n');
      assert.equal(lines[0], 'rank,layer,head,term,drop,logit_after,score_after,target,target_id,target_position');
      assert.equal(lines.length, 1 + 4 * 8 * 3);
      assert.match(lines[1], /,"not_next",0,$/);
    });

    test('Why this label? (the tab’s button, askWhy’s path): every term ranked for the predicted label', async () => {
      await frame.locator('#view-ranking').click();
      await frame.locator('#rk-term-c2c').uncheck();
      await frame.locator('#rk-label').selectOption('');
      await frame.locator('#rk-why').click();
      await waitUntil(async () => /^Following label “next”/.test((await frame.locator('#rk-status').textContent()) ?? ''), {
        timeout: 120_000,
        message: 'the ranking follows the predicted label',
      });
      assert.equal(await frame.locator('#rk-term-c2c').isChecked(), true, 'every term');
      assert.equal(await frame.locator('#rk-grid-c2c td.rk-cell').count(), 32);
      assert.match(await frame.locator('#why-label h3').textContent(), /^Why label “next”/);
    });
  });
}

/** `deberta-lens ablate --model DIR --text TEXT …` as JSON. */
function cliOn(dir, text, ...args) {
  const r = spawnSync(process.execPath, [CLI, 'ablate', '--model', dir, '--text', text, '--threads', '2', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
const FIXTURE_HEADS = path.join(REPO_ROOT, 'test', 'data', 'fixtures', 'task-heads');

/** Explains `text` with the tiny task-head fixture `name` (the Extension Development Host, default theme). */
function explainWith(name, text) {
  const state = {};
  before(async () => {
    state.lens = await startLens({ name: `task-runs-${name}`, model: path.join(FIXTURE_HEADS, name), files: { 'input.md': `${text}\n` } });
    await openFile(state.lens.page, 'input.md');
    await selectLines(state.lens.page, 1, 1);
    await runCommand(state.lens.page, 'DeBERTa Lens: Explain Attention');
    await waitReady(state.lens.frame, 180_000);
  });
  after(() => stopWithScreenshot(state.lens, `task-runs-${name}`));
  return state;
}

describe('DeBERTa Lens runs on a token classifier (tiny fixture)', { skip: skip ?? false }, () => {
  const TEXT = 'alice went to paris.';
  const dir = path.join(FIXTURE_HEADS, 'v3_tokcls');
  const state = explainWith('v3_tokcls', TEXT);

  test('Intervention: each token’s label before → after, the changed ones marked as the CLI’s', async () => {
    const { frame, page } = state.lens;
    const want = cliOn(dir, TEXT, '--ablate', '0.*:all');
    const changed = want.before.token_classification
      .filter((b, k) => b.predicted.id !== want.after.token_classification[k].predicted.id)
      .map((b) => String(b.position));
    await frame.locator('#view-interventions').click();
    await frame.locator('#iv-term').selectOption('all');
    await frame.locator('#iv-head').selectOption('*');
    await frame.locator('#iv-layer').selectOption('0');
    await frame.locator('#iv-add').click();
    await frame.locator('#iv-run').click();
    await frame.locator('#ts-tokens').waitFor({ timeout: 60_000 });
    assert.equal(await frame.locator('#ts-table tbody tr').count(), want.before.token_classification.length);
    assert.deepEqual(await frame.locator('#ts-table tbody tr.changed').evaluateAll((rs) => rs.map((r) => r.dataset.position)), changed);
    await screenshot(page, 'task-runs-v3_tokcls-intervention');
  });

  test('Head ranking: at a chosen token, by a label picked by name; Why pins that token', async () => {
    const { frame, page } = state.lens;
    await frame.locator('#view-ranking').click();
    const position = frame.locator('#rk-position');
    await position.waitFor({ timeout: 30_000 });
    assert.equal(await position.inputValue(), '1', 'the first word by default');
    await position.selectOption('10');
    await frame.locator('#rk-label').selectOption('3');
    const want = cliOn(dir, TEXT, '--sweep', 'all', '--position', '10', '--target', 'label:B-LOC');
    await frame.locator('#rk-run').click();
    await frame.locator('#rk-grid-c2p').waitFor({ timeout: 120_000 });
    const largest = Math.max(...want.ranking.map((c) => Math.abs(c.drop)));
    const digits = Math.max(2, Math.min(4, 1 - Math.floor(Math.log10(largest))));
    assert.deepEqual(
      await frame.locator('#rk-grid-c2p td.rk-cell').allTextContents(),
      want.grid.c2p.flat().map((x) => minus(x, digits)),
    );
    assert.match(await frame.locator('#why-label h3').textContent(), /^Why label “B-LOC” at 10 /);
    await screenshot(page, 'task-runs-v3_tokcls-ranking');
    await frame.locator('#why-list button.why-open').first().click();
    await frame.locator('#tokens .tok.pinned[data-i="10"]').waitFor({ timeout: 15_000 });
  });
});

describe('DeBERTa Lens runs on a QA head (tiny fixture, question [SEP] context)', { skip: skip ?? false }, () => {
  const TEXT = 'who sat on the mat? [SEP] the cat sat on the mat and the dog ran.';
  const dir = path.join(FIXTURE_HEADS, 'v3_qa');
  const state = explainWith('v3_qa', TEXT);

  test('Intervention: the answer span before → after; Head ranking follows it, Why this answer? pins its start', async () => {
    const { frame, page } = state.lens;
    await frame.locator('#view-interventions').click();
    await frame.locator('#iv-term').selectOption('all');
    await frame.locator('#iv-head').selectOption('*');
    await frame.locator('#iv-layer').selectOption('0');
    await frame.locator('#iv-add').click();
    await frame.locator('#iv-run').click();
    await frame.locator('#ts-span').waitFor({ timeout: 60_000 });
    assert.match(await frame.locator('#ts-summary').textContent(), /^Answer (unchanged|changed): “[^▁]+” \(tokens \d+–\d+, score /);
    await screenshot(page, 'task-runs-v3_qa-intervention');
    const want = cliOn(dir, TEXT, '--sweep', 'all');
    await frame.locator('#view-ranking').click();
    await waitUntil(async () => /Follows the answer span “/.test((await frame.locator('#rk-target').textContent()) ?? ''), {
      timeout: 30_000,
      message: 'the target is the answer span',
    });
    await frame.locator('#rk-why').click();
    await frame.locator('#rk-grid-c2p').waitFor({ timeout: 120_000 });
    assert.match(await frame.locator('#why-label h3').textContent(), /^Why the answer span “/);
    assert.equal(await frame.locator('#rk-list li').count(), 12);
    assert.equal(want.target.kind, 'span');
    await screenshot(page, 'task-runs-v3_qa-ranking');
    await frame.locator('#why-list button.why-open').first().click();
    await frame.locator(`#tokens .tok.pinned[data-i="${want.target.start_token}"]`).waitFor({ timeout: 15_000 });
  });
});
