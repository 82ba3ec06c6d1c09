// The Enhanced Mask Decoder in the real panel, on a checkpoint with an EMD (test/data/fixtures/emd/v3_shared_buckets:
// microsoft's lm_predictions head and absolute position table, random weights) and seed 003's "a new [MASK] opened
// beside the new [MASK]": the layer picker lists the decoder's passes as "EMD 1" / "EMD 2" after the encoder's
// layers; picking EMD 1 draws its heatmap (the readout's probs are microsoft's first pass, recorded inside its
// DisentangledSelfAttention) under the band of the query's position part (microsoft's H and P, float64); each
// [MASK]'s card shows microsoft's EMD top-5 beside Hugging Face's plain head's. Light theme from the checkout, dark
// from the packaged VSIX. Screenshots: test-results/e2e/emd-{light,dark}-{pass1,pass2}.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cellPosition, extensionMissing, readoutValues, startLens, stopWithScreenshot, waitHeatmapDrawn } from './lib/lens.mjs';
import { FIXTURES } from './lib/paths.mjs';
import { packageVsix } from './lib/vsix.mjs';
import { explainFile } from './lib/predictions.mjs';
import { screenshot, waitUntil } from './lib/workbench.mjs';

const MODEL = path.join(FIXTURES, 'emd', 'v3_shared_buckets');
const readJson = (f) => JSON.parse(fs.readFileSync(path.join(MODEL, f), 'utf8'));
const FIXTURE = readJson('expected_outputs.json');
const CASE = FIXTURE.cases[0];
const SHARES = readJson('position_share.json').cases[0];
const INTERVENTIONS = readJson('interventions.json').cases[0];
const TEXT = CASE.text; // a new [MASK] opened beside the new [MASK]
const LAYERS = JSON.parse(fs.readFileSync(path.join(MODEL, 'config.json'), 'utf8')).num_hidden_layers;
const VIEWPORT = { width: 1400, height: 1000 };
const skip = extensionMissing();

/** Each card: its position and the ids of both lists. */
function readCards(frame) {
  return frame.locator('#predictions .pred-card.emd').evaluateAll((cs) =>
    cs.map((c) => ({
      position: Number(c.dataset.position),
      emd: [...c.querySelectorAll('[data-decoder="emd"] .pred-row')].map((r) => Number(r.dataset.id)),
      plain: [...c.querySelectorAll('[data-decoder="plain"] .pred-plain-row')].map((r) => Number(r.dataset.id)),
      titles: [...c.querySelectorAll('.pred-column-title')].map((t) => t.textContent),
    })),
  );
}

async function pickLayer(frame, value) {
  const before = Number((await frame.locator('canvas#heatmap').getAttribute('data-painted')) ?? 0);
  await frame.locator('#layer').selectOption(String(value));
  await waitUntil(async () => Number((await frame.locator('canvas#heatmap').getAttribute('data-painted')) ?? 0) > before, {
    timeout: 60_000,
    message: `the heatmap of layer ${value} painted`,
  });
  await waitHeatmapDrawn(frame);
}

for (const theme of (process.env.E2E_THEMES ?? 'light,dark').split(',').filter(Boolean)) {
  describe(`The Enhanced Mask Decoder in the panel, ${theme} theme`, { skip: skip ?? false }, () => {
    let lens, frame, page, vsix;

    before(async () => {
      if (theme === 'dark') vsix = packageVsix();
      lens = await startLens({
        name: `emd-${theme}`,
        model: MODEL,
        viewport: VIEWPORT,
        vsix,
        settings: { 'workbench.colorTheme': theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' },
        files: { 'emd.txt': TEXT },
      });
      ({ frame, page } = lens);
    });
    after(async () => {
      await stopWithScreenshot(lens, `emd-${theme}`);
      if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
    });

    test('each [MASK]: microsoft’s EMD top-5 beside Hugging Face’s plain head', async () => {
      await explainFile(page, frame, 'emd.txt');
      assert.match(
        await frame.locator('#predictions-summary').textContent(),
        /^through the EMD \(plain head beside\) · 2 \[MASK\] · top 5: /,
      );
      const cards = await readCards(frame);
      assert.deepEqual(
        cards.map((c) => c.position),
        CASE.mask_positions,
      );
      cards.forEach((c, k) => {
        assert.deepEqual(c.titles, ['with EMD', 'without EMD']);
        assert.deepEqual(c.emd, CASE.expected.emd.mlm[k].top5_ids, `EMD top-5 at #${c.position}`);
        assert.deepEqual(c.plain, CASE.expected.plain.mlm[k].top5_ids, `plain top-5 at #${c.position}`);
      });
    });

    test('the layer picker lists EMD 1 and EMD 2 after the encoder; EMD 1 is microsoft’s first pass, its query’s position part above it', async () => {
      const options = await frame.locator('#layer option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
      assert.deepEqual(options.slice(-3), [
        [String(LAYERS - 1), `Layer ${LAYERS - 1}`],
        [String(LAYERS), 'EMD 1'],
        [String(LAYERS + 1), 'EMD 2'],
      ]);
      await frame.locator('#term').selectOption('probs');
      await frame.locator('#head').selectOption('0');
      await pickLayer(frame, LAYERS);
      // The band: one cell per token, each the share microsoft's H and P give.
      const band = frame.locator('#emd-share-band');
      await band.waitFor({ state: 'visible', timeout: 60_000 });
      const shares = await band.locator('.emd-cell').evaluateAll((cs) => cs.map((c) => Number(c.dataset.share)));
      assert.equal(shares.length, SHARES.share.length);
      shares.forEach((s, i) => assert.ok(Math.abs(s - SHARES.share[i]) < 1e-5, `share of #${i}: ${s} vs microsoft ${SHARES.share[i]}`));
      assert.match(await frame.locator('#emd-share-summary').textContent(), /^position part of the query: mean \d+\.\d%/);
      assert.match(await frame.locator('#emd-share-summary').getAttribute('title'), /‖P_i‖ \/ \(‖H_i‖ \+ ‖P_i‖\)/);
      assert.match(await frame.locator('#emd-query .emd-caption').textContent(), /query I = H \+ absolute positions P/);
      // The heatmap's cell (i, j) in the readout is microsoft's first pass, head 0.
      const [i, j] = [6, 24];
      const n = CASE.input_ids.length;
      await frame.locator('canvas#heatmap').hover({ position: await cellPosition(frame, i, j, n) });
      await waitUntil(async () => /EMD 1, head 0/.test(await frame.locator('#readout').textContent()), {
        message: 'the readout names EMD 1',
      });
      const values = await readoutValues(frame);
      const att = CASE.expected.emd.passes[0].attention;
      const want = att.probs[0][i][j];
      assert.ok(Math.abs(Number(values.probs) - want) <= 5e-4 * Math.max(1, want), `probs ${values.probs} vs microsoft ${want}`);
      const c2p = att.c2p_scaled[0][i][j] * FIXTURE.scale;
      assert.ok(Math.abs(Number(values.c2p.replace('−', '-')) - c2p) <= 1e-3 * Math.max(1, Math.abs(c2p)), `c2p ${values.c2p} vs ${c2p}`);
      // The hovered row's share, by name.
      assert.match(await frame.locator('#emd-share-row').textContent(), /^#6 “\[MASK\]”: position \d+\.\d% of the query/);
      await screenshot(page, `emd-${theme}-pass1`);
    });

    test('EMD 2: its query is EMD 1’s output; stepping back with [ returns to EMD 1', async () => {
      await pickLayer(frame, LAYERS + 1);
      assert.match(await frame.locator('#emd-query .emd-caption').textContent(), /query = EMD 1's output/);
      assert.equal(await frame.locator('#emd-share-band').count(), 0, 'no position band: the second pass adds no positions');
      await screenshot(page, `emd-${theme}-pass2`);
      await frame.locator('#layer-prev').click();
      await waitUntil(async () => (await frame.locator('#layer').inputValue()) === String(LAYERS), { message: 'back on EMD 1' });
      await frame.locator('#layer-prev').click();
      await waitUntil(async () => (await frame.locator('#layer').inputValue()) === String(LAYERS - 1), {
        message: 'the last encoder layer',
      });
      await frame.locator('#emd-query').waitFor({ state: 'hidden' });
    });

    test('Intervention reaches into the decoder: c2p of head 1 in EMD 1 removed, before and after as microsoft’s', async () => {
      const run = INTERVENTIONS.runs.find((r) => r.entries === `${LAYERS}.1:c2p` && r.mode === 'zero');
      assert.ok(run, 'the fixture has this intervention');
      await frame.locator('#view-interventions').click();
      const layerOptions = await frame.locator('#iv-layer option').evaluateAll((os) => os.map((o) => o.textContent));
      assert.deepEqual(layerOptions.slice(-2), ['EMD 1', 'EMD 2']);
      await frame.locator('#iv-term').selectOption('c2p');
      await frame.locator('#iv-head').selectOption('1');
      await frame.locator('#iv-layer').selectOption(String(LAYERS));
      await frame.locator('#iv-add').click();
      const chip = frame.locator('#iv-entries .chip');
      assert.equal(await chip.getAttribute('data-entry'), `${LAYERS}.1:c2p`);
      assert.equal((await chip.textContent()).trim(), 'EMD 1 · 1:c2p ×');
      await frame.locator('#iv-run').click();
      const rows = frame.locator('#iv-table tbody tr');
      await rows.first().waitFor({ timeout: 60_000 });
      assert.match(
        await frame.locator('#iv-status').textContent(),
        /^EMD 1 · 1:c2p zeroed; EMD 1 and EMD 2 rerun, predictions through the EMD/,
      );
      const softmax = (row) => {
        const m = Math.max(...row);
        const e = row.map((x) => Math.exp(x - m));
        const z = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / z);
      };
      const shown = (probs) =>
        probs
          .map((p, id) => [p, id])
          .sort((a, b) => b[0] - a[0])
          .slice(0, 5)
          .map(([p]) => `${(100 * p).toFixed(1)}%`);
      for (const [k, position] of INTERVENTIONS.mask_positions.entries()) {
        const row = frame.locator(`#iv-table tbody tr[data-position="${position}"]`);
        const lists = row.locator('ol.iv-top');
        const pcts = (n) => lists.nth(n).locator('.meta').allTextContents();
        assert.deepEqual(await pcts(0), shown(softmax(INTERVENTIONS.before_logits[k])), `before at #${position}`);
        assert.deepEqual(await pcts(1), shown(softmax(run.after_logits[k])), `after at #${position}`);
      }
      assert.equal(await frame.locator('#iv-show').isDisabled(), true, 'no intervened attention to show for the EMD yet');
      await screenshot(page, `emd-${theme}-intervention`);
    });

    test('Head ranking in the EMD passes: rows EMD 1 / EMD 2, drops as microsoft’s; a cell opens that pass’s head', async () => {
      const want = readJson('interventions.json').sweep;
      await frame.locator('#view-ranking').click();
      const where = frame.locator('#rk-where');
      await frame.locator('#rk-where-group:not([hidden])').waitFor({ timeout: 30_000 });
      await where.selectOption('emd');
      await frame.locator('#rk-mode').selectOption(want.mode);
      await frame.locator('#rk-run').click();
      const grid = frame.locator('#rk-grid-c2p');
      await grid.waitFor({ timeout: 120_000 });
      const rowsShown = await grid.locator('tbody th').allTextContents();
      assert.deepEqual(rowsShown, ['EMD 1', 'EMD 2']);
      assert.match(await frame.locator('#rk-status').textContent(), /reruns in the EMD passes \(read through the EMD\)/);
      for (const cell of want.cells) {
        const td = frame.locator(`#rk-grid-${cell.term} td.rk-cell[data-layer="${cell.layer}"][data-head="${cell.head}"]`);
        const title = await td.getAttribute('title');
        const shown = Number(/drops by (−?[\d.]+(?:e[-+]?\d+)?)/.exec(title)[1].replace('−', '-'));
        const drop = want.logprob_before - cell.logprob_after;
        // The title rounds to 3 decimals.
        assert.ok(Math.abs(shown - drop) <= 5.1e-4, `${cell.layer}.${cell.head}:${cell.term}: ${shown} vs ${drop}`);
      }
      await screenshot(page, `emd-${theme}-ranking`);
      await frame.locator(`#rk-grid-c2p td.rk-cell[data-layer="${LAYERS + 1}"][data-head="2"]`).click();
      await waitUntil(async () => (await frame.locator('#layer').inputValue()) === String(LAYERS + 1), { message: 'EMD 2 opened' });
      await waitHeatmapDrawn(frame);
      assert.equal(await frame.locator('#head').inputValue(), '2');
    });
  });
}
