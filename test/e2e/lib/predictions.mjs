// Helpers of the predictions E2E (test/e2e/predictions.test.mjs): the CLI's answers the panel must match, the
// panel's prediction cards read back, and the editor steps that ask for them.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { waitHeatmapDrawn, waitReady } from './lens.mjs';
import { REPO_ROOT } from './paths.mjs';
import { openFile, runCommand, selectAll, waitUntil } from './workbench.mjs';

/** `deberta-lens predict` on the same text: the reference the panel must match. */
export function cliAblate(text, spec) {
  const r = spawnSync(
    process.execPath,
    [path.join(REPO_ROOT, 'dist', 'cli.js'), 'ablate', '--model', 'default', '--text', text, '--ablate', spec, '--top', '5'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, `deberta-lens ablate failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export function cliPredict(text, positions) {
  const args = [path.join(REPO_ROOT, 'dist', 'cli.js'), 'predict', '--model', 'default', '--text', text, '--top', '5'];
  if (positions) args.push('--positions', positions.join(','));
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `deberta-lens predict failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The cards of the Predictions section: position, source, rows (id, piece, probability) and the original. */
export async function cards(frame) {
  return frame.locator('#predictions .pred-card:not(.pending)').evaluateAll((cs) =>
    cs.map((c) => ({
      position: Number(c.dataset.position),
      source: c.dataset.source,
      top: [...c.querySelectorAll('.pred-row')].map((r) => ({
        id: Number(r.dataset.id),
        token: r.dataset.token,
        prob: Number(r.dataset.prob),
        shown: r.querySelector('.pred-tok').textContent,
      })),
      original: c.querySelector('.pred-original')
        ? {
            id: Number(c.querySelector('.pred-original').dataset.id),
            prob: Number(c.querySelector('.pred-original').dataset.prob),
            rank: Number(c.querySelector('.pred-original').dataset.rank),
          }
        : undefined,
    })),
  );
}

export function assertSame(card, want, what) {
  assert.equal(card.position, want.position, `${what}: position`);
  assert.deepEqual(
    card.top.map((t) => t.id),
    want.top.map((t) => t.id),
    `${what}: ids`,
  );
  assert.deepEqual(
    card.top.map((t) => t.token),
    want.top.map((t) => t.token),
    `${what}: pieces`,
  );
  assert.deepEqual(
    card.top.map((t) => t.prob.toFixed(3)),
    want.top.map((t) => t.prob.toFixed(3)),
    `${what}: probabilities`,
  );
  if (want.original) {
    assert.equal(card.original.id, want.original.id, `${what}: original id`);
    assert.equal(card.original.rank, want.original.rank, `${what}: original rank`);
    assert.equal(card.original.prob.toFixed(3), want.original.prob.toFixed(3), `${what}: original probability`);
  }
}

/** Every row's token, bar and percentage sit side by side without overlapping, inside the card. */
export async function rowOverlaps(frame) {
  return frame.locator('#predictions .pred-row').evaluateAll((rows) =>
    rows.flatMap((r) => {
      const [tok, bar, pct] = ['.pred-tok', '.pred-bar', '.pred-pct'].map((s) => r.querySelector(s).getBoundingClientRect());
      const card = r.closest('.pred-card').getBoundingClientRect();
      const bad = [];
      if (tok.right > bar.left + 0.5) bad.push(`token ends at ${tok.right} after the bar starts at ${bar.left}`);
      if (bar.right > pct.left + 0.5) bad.push(`bar ends at ${bar.right} after the percentage starts at ${pct.left}`);
      if (pct.right > card.right + 0.5) bad.push('percentage runs out of its card');
      if (tok.width < 10 || bar.width < 10) bad.push(`token ${tok.width}px, bar ${bar.width}px wide`);
      return bad.map((b) => `row ${r.dataset.rank} of #${r.closest('.pred-card').dataset.position}: ${b}`);
    }),
  );
}

/** Hovers the text of `needle` (its k-th occurrence) in the active editor. */
export async function hoverEditorText(page, needle, k = 0) {
  const box = await page.locator('.editor-group-container.active .monaco-editor .view-lines').evaluate(
    (root, [s, nth]) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      let seen = 0;
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        let at = n.textContent.indexOf(s);
        while (at >= 0) {
          if (seen++ === nth) {
            const r = document.createRange();
            r.setStart(n, at + 1);
            r.setEnd(n, at + s.length - 1);
            const b = r.getBoundingClientRect();
            return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
          }
          at = n.textContent.indexOf(s, at + 1);
        }
      }
      return null;
    },
    [needle, k],
  );
  assert.ok(box, `"${needle}" is on screen in the editor`);
  await page.mouse.move(box.x, box.y);
}

export async function explainFile(page, frame, file) {
  await openFile(page, file);
  await selectAll(page);
  const before = await frame
    .locator('canvas#heatmap')
    .getAttribute('data-n', { timeout: 1_000 })
    .catch(() => null);
  await runCommand(page, 'DeBERTa Lens: Explain Attention');
  await waitReady(frame, 120_000);
  await waitUntil(
    async () => {
      const now = await frame
        .locator('canvas#heatmap')
        .getAttribute('data-n', { timeout: 1_000 })
        .catch(() => null);
      return now !== null && now !== before;
    },
    { timeout: 60_000, message: `a new result for ${file}` },
  );
  await frame.locator('#predictions[data-state="ready"]').waitFor({ state: 'attached', timeout: 60_000 });
  await waitHeatmapDrawn(frame);
}
