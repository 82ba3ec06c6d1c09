// The Compare Models panel in code-server: put a model into the workbench's Hugging Face cache (so the pick
// lists it as a user would see it), run "Compare with Another Model…", and read the compare panel's frame.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2EError } from './errors.mjs';
import { canvasStats, isDrawn, runCommand, waitUntil } from './workbench.mjs';

/**
 * Copies a model folder into the code-server root's Hugging Face hub cache (XDG_CACHE_HOME/huggingface/hub) as
 * models--<repo>/snapshots/<rev>; the Select Model pick lists it as `repo`.
 */
export function installHubModel(server, srcDir, repo, rev = '0123456789abcdef0123456789abcdef01234567') {
  const snap = path.join(server.dirs.root, 'xdg-cache', 'huggingface', 'hub', `models--${repo.split('/').join('--')}`, 'snapshots', rev);
  fs.mkdirSync(snap, { recursive: true });
  for (const f of fs.readdirSync(srcDir)) if (f !== 'expected_outputs.json') fs.copyFileSync(path.join(srcDir, f), path.join(snap, f));
  return snap;
}

/** The first frame of the page whose document has `selector` (webview content frames included). */
export async function frameWith(page, selector, { timeout = 60_000 } = {}) {
  let found;
  await waitUntil(
    async () => {
      for (const f of page.frames()) {
        if (
          await f
            .locator(selector)
            .count()
            .catch(() => 0)
        ) {
          found = f;
          return true;
        }
      }
      return false;
    },
    { timeout, interval: 100, message: `a webview frame with ${selector}` },
  );
  return found;
}

/** The main DeBERTa Lens panel's frame (not the compare panel's), once it shows a result. */
export function lensFrame(page, opts) {
  return frameWith(page, '#app[data-state="ready"]:not(.compare-app)', opts);
}

/**
 * Runs Compare with Another Model… (from the palette, or `open`, e.g. a click on the panel's button) and picks
 * the entry whose label contains `pick`; returns the compare frame.
 */
export async function runCompare(page, pick, { timeout = 120_000, open } = {}) {
  if (open) await open();
  else await runCommand(page, 'DeBERTa Lens: Compare with Another Model');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
  try {
    await row.waitFor({ timeout: 20_000 });
  } catch {
    const rows = await page.locator('.quick-input-list .monaco-list-row').allTextContents();
    throw new E2EError(`the model pick has no entry "${pick}"; it lists: ${rows.join(' | ')}`);
  }
  await page.locator('.quick-input-widget input').fill(pick);
  await row.waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
  return frameWith(page, '#app.compare-app[data-state="ready"]', { timeout });
}

/** Waits until a side's heatmap (`a`, `b` or `diff`) has pixels of more than one colour. */
export async function waitPainted(frame, which, { timeout = 60_000 } = {}) {
  const canvas = frame.locator(`canvas#heatmap-${which}`);
  let last;
  await waitUntil(
    async () => {
      last = await canvasStats(canvas).catch(() => null);
      return last && isDrawn(last);
    },
    { timeout, interval: 25, message: `canvas#heatmap-${which} drawn (last ${JSON.stringify(last)})` },
  );
  return last;
}

/** The number of times a side's heatmap has been painted (Heatmap's data-painted counter). */
export async function paintCount(frame, which) {
  return Number(
    (await frame
      .locator(`canvas#heatmap-${which}`)
      .getAttribute('data-painted')
      .catch(() => '0')) ?? 0,
  );
}
