// UI benchmark in code-server + Chromium with the fixture model: prints one JSON object (and writes it to
// test-results/e2e/ui-bench.json). Per target length (32/128/512 tokens):
//   command_to_heatmap_ms  palette Enter on "Explain Attention" → canvas#heatmap drawn at the new size
//   command_to_init_ms     the same Enter → the result's `init` message reaching the page (same machine clock)
//   command_to_painted_ms  the same Enter → the page's mark of that first heatmap paint (the page's clock on the
//                          machine's time line): command_to_heatmap_ms without the polling, which a loaded machine
//                          stretches by up to a few hundred ms; command_to_presented_ms: to the next animation
//                          frame after the canvas took its new size (the picture on screen)
//   switch_to_repaint_ms   term / layer / head select change → heatmap repainted and a frame presented (in-page clock);
//                          term/layer/head step to neighbours (prefetched), cold = jumps to matrices never fetched
//   hover_to_highlight_ms  token mouseover → query + neighbour classes in the strip (median/min, in-page clock)
//   bytes_per_view         bytes reaching the webview for one view change (term switch; Compare Heads)
//   engine_explain_ms      the engine's explain time for that run (what the host reports in `init`: tokens in to
//                          result out, less the preview — the one head the first heatmap shows, computed in the
//                          same runtime call after the forward pass), and
//                          heatmap_over_target: command_to_heatmap_ms / (1.3 × engine_explain_ms + 200)
//                          (painted_over_target, presented_over_target: the same with those figures)
//   layer_switch_ms        #layer changed → that layer's heatmap painted and the next frame presented (median/min),
//                          switching back to back; layer_switch_after_1s_ms: 1 s on each layer before the next
// With --explains N: the extension host's and the runtime process's resident memory after explain 1, N/2 and N
// of the longest length (memory_over_explains); --memory-only skips the switch, hover and bytes timings (their
// in-page animation-frame waits can stall on a heavily loaded machine) and keeps command → heatmap.
// No assertion on times: the numbers are for reading.
// Usage: node test/e2e/ui-bench.mjs [--lengths 32,128,512] [--model default|DIR] [--explains 100] [--memory-only]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startLens, waitReady } from './lib/lens.mjs';
import { RESULTS_DIR } from './lib/paths.mjs';
import { canvasStats, focusTab, isDrawn, openFile, runCommand, selectAll, waitUntil } from './lib/workbench.mjs';

const arg = process.argv.indexOf('--lengths');
const lengths = (arg > 0 ? process.argv[arg + 1] : '32,128,512').split(',').map(Number);
// --model default: the bundled model (realistic tokenizer and size); --model v3-base (any name in
// tools/bench/geometries.ts): random weights of that geometry with the bundled model's tokenizer, written to a
// temporary folder (needs `npm run compile`); --model DIR: that folder; otherwise the tiny fixture.
const t00 = Date.now();
/** One progress line on stderr, so a stalled run shows its last step. */
const progress = (what) => process.stderr.write(`[ui-bench ${((Date.now() - t00) / 1000).toFixed(1)} s] ${what}\n`);
const modelArg = process.argv.indexOf('--model');
let model = modelArg > 0 ? process.argv[modelArg + 1] : undefined;
let geometryDir;
if (model && /^v3-/.test(model)) {
  const { V3_GEOMETRIES, writeV3Checkpoint } = await import(path.resolve('out/tools/bench/geometries.js'));
  if (!V3_GEOMETRIES[model]) throw new Error(`unknown geometry ${model}`);
  geometryDir = fs.mkdtempSync(path.join(os.tmpdir(), `lens-ui-${model}-`));
  progress(`writing ${model} checkpoint`);
  writeV3Checkpoint(geometryDir, V3_GEOMETRIES[model]);
  for (const f of fs.readdirSync('models/default'))
    if (!/^(config\.json|model\.safetensors|.*\.(md|png))$/.test(f))
      fs.copyFileSync(path.join('models/default', f), path.join(geometryDir, f));
  model = geometryDir;
}
const WORDS = 'the model reads every token and attends to its neighbours by content and by relative position so that'.split(' ');
const textOfChars = (chars) => {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += WORDS[i % WORDS.length] + ' ';
  return s.trim();
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const explainsArg = process.argv.indexOf('--explains');
const explains = explainsArg > 0 ? Number(process.argv[explainsArg + 1]) : 0;
const memoryOnly = process.argv.includes('--memory-only');
/** Any wait in the page, given up after 60 s with the step named. A Node-side timer, because the page's own
 * checks run in animation frames, which stop when the webview is not presented. */
async function step(name, work, ms = 60_000) {
  progress(name);
  let timer;
  try {
    return await Promise.race([
      work(),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error(`ui-bench: ${name}: no answer in ${ms / 1000} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resident MB of the extension host and of the runtime process (both in code-server's process group). */
function processMemory(pgid) {
  const out = { extension_host_mb: 0, runtime_mb: 0 };
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      if (cmd.includes('runtime-worker')) out.runtime_mb += Math.round(rss);
      else if (cmd.includes('extensionHost')) out.extension_host_mb += Math.round(rss);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

// Keeps the last `init` (its engine time) and counts the inits.
const installWatch = () => {
  if (window.__lensWatch) return;
  window.__lensWatch = true;
  window.__lensInits = 0;
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (m?.type === 'init') {
      window.__lensInitMs = m.init.ms;
      window.__lensInitAt = Date.now();
      window.__lensInits++;
    }
  });
  // The next animation frame after the heatmap takes a new size (the picture is on screen), on the machine's time line.
  new MutationObserver((records) => {
    if (records.some((r) => r.target.id === 'heatmap'))
      requestAnimationFrame(() => {
        window.__lensPresentedAt = performance.timeOrigin + performance.now();
      });
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-n'] });
};

// Counts bytes of every message the webview page receives from now on (ArrayBuffers by byteLength).
const installCounter = () => {
  const size = (v) => {
    if (v == null) return 0;
    if (v instanceof ArrayBuffer) return v.byteLength;
    if (ArrayBuffer.isView(v)) return v.byteLength;
    if (typeof v === 'string') return v.length;
    if (typeof v !== 'object') return 8;
    let n = 0;
    for (const [k, x] of Object.entries(v)) n += k.length + size(x);
    return n;
  };
  window.__lensBytes = 0;
  window.__lensMessages = 0;
  if (!window.__lensCounter) {
    window.__lensCounter = true;
    window.addEventListener('message', (e) => {
      window.__lensBytes += size(e.data);
      window.__lensMessages++;
    });
  }
};

progress('starting code-server');
const lens = await startLens({
  name: 'ui-bench',
  ...(model ? { model } : {}),
  settings: { 'debertaLens.maxTokens': 8192 },
  files: Object.fromEntries([['calibrate.txt', textOfChars(400)]]),
});
const { page, frame, server } = lens;
const body = frame.locator('body');
const tokenCount = async () => frame.locator('#tokens .tok').count();
const results = { model: model ?? 'test/data/fixtures/deberta/v3_tiny', lengths: {} };
try {
  // Calibrate characters per token with this tokenizer, then write one file per target length.
  await openFile(page, 'calibrate.txt');
  await selectAll(page);
  await runCommand(page, 'DeBERTa Lens: Explain Attention');
  progress('calibration explain');
  await waitReady(frame);
  const perChar = (await tokenCount()) / 400;
  for (const n of lengths) {
    fs.writeFileSync(path.join(server.dirs.workspace, `len${n}.txt`), textOfChars(Math.max(1, Math.round((n - 2) / perChar))));
  }
  await body.evaluate(installWatch);
  let lastFile = 'calibrate.txt';
  for (const n of lengths) {
    const r = {};
    await focusTab(page, lastFile); // back to the text's group, so the new file does not cover the panel
    lastFile = `len${n}.txt`;
    await openFile(page, `len${n}.txt`);
    await selectAll(page);
    const before = await frame.locator('canvas#heatmap').evaluate((c) => c.dataset.n ?? '');
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').fill('>DeBERTa Lens: Explain Attention');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Explain Attention' }).first().waitFor();
    progress(`explain ${n} tokens`);
    const t0 = Date.now();
    await page.keyboard.press('Enter');
    // Polls the cheap size mark and takes the time when it moves; the pixel check (a full-canvas read, ~100 ms at
    // 500 tokens) runs only then, so its cost is not part of the figure.
    let t1 = 0;
    await waitUntil(
      async () => {
        const now = await frame.locator('canvas#heatmap').evaluate((c) => c.dataset.n ?? '');
        if (now === before) return false;
        t1 ||= Date.now();
        return isDrawn(await canvasStats(frame.locator('canvas#heatmap')));
      },
      { timeout: 120_000, interval: 10, message: `heatmap for ${n} tokens` },
    );
    r.command_to_heatmap_ms = t1 - t0;
    // Where that time goes: until the result reaches the page (host: command, explain, first layer, message),
    // and from there to the picture (the page: shell, strip, paint).
    r.command_to_init_ms = (await body.evaluate(() => window.__lensInitAt)) - t0;
    r.command_to_painted_ms = Math.round(
      (await body.evaluate(() => {
        const init = performance.getEntriesByName('lens-init').at(-1)?.startTime ?? 0;
        return performance.timeOrigin + (performance.getEntriesByName('lens-painted').find((e) => e.startTime >= init)?.startTime ?? NaN);
      })) - t0,
    );
    // The page's part, from its own marks: init → shell and strip built → first heatmap painted.
    progress(`first heatmap ${n} tokens in ${r.command_to_heatmap_ms} ms`);
    r.page_ms = await body.evaluate(() => {
      const last = (name) => performance.getEntriesByName(name).at(-1)?.startTime;
      const [init, shell] = [last('lens-init'), last('lens-shell')];
      const painted = performance.getEntriesByName('lens-painted').find((e) => e.startTime >= init)?.startTime;
      return { shell: +(shell - init).toFixed(1), painted: +(painted - init).toFixed(1) };
    });
    r.tokens = await tokenCount();
    r.engine_explain_ms = +(await body.evaluate(() => window.__lensInitMs)).toFixed(1);
    r.command_to_presented_ms = Math.round((await body.evaluate(() => window.__lensPresentedAt)) - t0);
    r.heatmap_over_target = +(r.command_to_heatmap_ms / (1.3 * r.engine_explain_ms + 200)).toFixed(2);
    r.painted_over_target = +(r.command_to_painted_ms / (1.3 * r.engine_explain_ms + 200)).toFixed(2);
    r.presented_over_target = +(r.command_to_presented_ms / (1.3 * r.engine_explain_ms + 200)).toFixed(2);
    if (memoryOnly) {
      results.lengths[n] = r;
      continue;
    }

    // Layer switch: #layer changed → the new layer (computed on demand) painted → the next frame. As a
    // reader steps through layers (1 s on each before the next) and back to back (each switch right after the
    // last paint, while the background computation of the next layer may still run).
    const layers = await frame.locator('#layer option').count();
    const switchTo = (layer) =>
      body.evaluate(async (_b, layer) => {
        const sel = document.querySelector('#layer');
        const c = document.querySelector('canvas#heatmap');
        const before = c.dataset.painted;
        const t0 = performance.now();
        sel.value = String(layer);
        sel.dispatchEvent(new Event('change', { bubbles: true }));
        // The heatmap's paint counter, not a slice's arrival: the view may hold the layer already (its own prefetch).
        await new Promise((res, rej) => {
          const f = () =>
            c.dataset.painted !== before
              ? requestAnimationFrame(() => res())
              : performance.now() - t0 > 60_000
                ? rej(new Error(`layer ${layer}: no repaint in 60 s`))
                : requestAnimationFrame(f);
          f();
        });
        return performance.now() - t0;
      }, layer);
    const summary = (xs) => ({ median: +median(xs).toFixed(1), min: +Math.min(...xs).toFixed(1), runs: xs.length });
    // First half of the other layers as a reader (1 s on each), the rest back to back: every switch goes to a layer
    // not shown before. The view opens on the layer the last result was left on (its saved state), not always 0.
    const shown = Number(await frame.locator('#layer').inputValue());
    const order = Array.from({ length: layers }, (_, k) => k).filter((k) => k !== shown);
    const backToBack = [];
    const reading = [];
    const half = Math.max(1, Math.floor(order.length / 2));
    for (const k of order.slice(0, half)) {
      await page.waitForTimeout(1000);
      reading.push(await step(`layer ${k} after 1 s`, () => switchTo(k)));
    }
    for (const k of order.slice(half)) backToBack.push(await step(`layer ${k} back to back`, () => switchTo(k)));
    if (backToBack.length) r.layer_switch_ms = summary(backToBack);
    if (reading.length) r.layer_switch_after_1s_ms = summary(reading);
    if (order.length) await step(`back to layer ${shown}`, () => switchTo(shown));

    // Switch → repaint: change a select as a person would (change event), wait for the heatmap's paint counter
    // to move, then for the next animation frame (the picture is on screen). Each switch goes to a matrix not
    // yet seen, so the host's answer is part of the time; the slice cache would hide it otherwise. (The layer
    // steps are in the last term, whose layers the pass above has shown already: they time a repaint from cache.)
    const switchTimes = { term: [], layer: [], head: [] };
    const plan = [];
    for (const t of ['c2c', 'c2p', 'p2c', 'scores', 'probs']) plan.push(['term', '#term', t]);
    for (const l of await frame.locator('#layer option').evaluateAll((os) => os.map((o) => o.value))) plan.push(['layer', '#layer', l]);
    for (const h of await frame.locator('#head option').evaluateAll((os) => os.map((o) => o.value).filter((v) => /^\d+$/.test(v))))
      plan.push(['head', '#head', h]);
    // Cold jumps: c2c heads three apart on the last layer, never shown and never prefetched (the view prefetches
    // the neighbouring heads, the next term and the next layer), so each one is a full host round trip.
    const headValues = await frame.locator('#head option').evaluateAll((os) => os.map((o) => o.value).filter((v) => /^\d+$/.test(v)));
    const jumps = [['cold', '#term', 'c2c']];
    for (let k = 1; k <= 6; k++) jumps.push(['cold', '#head', headValues[(3 * k) % headValues.length]]);
    switchTimes.cold = [];
    for (const [what, sel, value] of [...plan, ...jumps]) {
      const ms = await step(`${what} switch ${sel} = ${value}`, () =>
        body.evaluate(
          async (_b, [sel, value]) => {
            const s = document.querySelector(sel);
            if (s.value === value) return null;
            const c = document.querySelector('canvas#heatmap');
            const before = c.dataset.painted;
            const t0 = performance.now();
            s.value = value;
            s.dispatchEvent(new Event('change'));
            await new Promise((res, rej) => {
              const f = () =>
                c.dataset.painted !== before
                  ? requestAnimationFrame(() => res())
                  : performance.now() - t0 > 60_000
                    ? rej(new Error(`${sel} = ${value}: no repaint in 60 s`))
                    : requestAnimationFrame(f);
              f();
            });
            return performance.now() - t0;
          },
          [sel, value],
        ),
      );
      if (ms !== null) switchTimes[what].push(ms);
    }
    r.switch_to_repaint_ms = Object.fromEntries(
      Object.entries(switchTimes).map(([k, xs]) => [
        k,
        { median: +median(xs).toFixed(1), max: +Math.max(...xs).toFixed(1), runs: xs.length },
      ]),
    );
    r.switch_to_repaint_ms.all = { median: +median(Object.values(switchTimes).flat()).toFixed(1) };

    // Hover latency, in the page's own clock: synthetic mouseover on a token → highlight classes present.
    const lat = [];
    for (let k = 0; k < 9; k++) {
      const i = 1 + Math.floor(((k + 1) * (r.tokens - 2)) / 10);
      lat.push(
        await step(`hover token ${i}`, () =>
          body.evaluate(async (_body, i) => {
            const strip = document.querySelector('#tokens');
            strip.dispatchEvent(new MouseEvent('mouseleave'));
            // A raw term's row lights what raises the score (.neighbour) and what lowers it (.negative); a row with no
            // positive entry (common with random weights) lights only the latter.
            const lit = '#tokens .tok.neighbour, #tokens .tok.negative';
            await new Promise((res) => {
              const f = () => (document.querySelector(lit) ? requestAnimationFrame(f) : res());
              f();
            });
            const tok = document.querySelector(`#tokens .tok[data-i="${i}"]`);
            if (!tok) return `no token ${i}: ${[...document.querySelectorAll('#tokens .tok')].map((t) => t.dataset.i).join(',')}`;
            const t0 = performance.now();
            tok.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
            await new Promise((res) => {
              const f = () =>
                document.querySelector(`#tokens .tok.query[data-i="${i}"]`) && document.querySelector(lit)
                  ? res()
                  : requestAnimationFrame(f);
              f();
            });
            return performance.now() - t0;
          }, i),
        ),
      );
      if (typeof lat.at(-1) === 'string') throw new Error(lat.at(-1));
    }
    r.hover_to_highlight_ms = { median: +median(lat).toFixed(1), min: +Math.min(...lat).toFixed(1), runs: lat.length };

    // Bytes per view: a term switch in the heatmap view, then Compare Heads.
    progress('bytes per view');
    await body.evaluate(installCounter);
    const term = await frame.locator('#term').inputValue();
    await frame.locator('#term').selectOption(term === 'c2p' ? 'c2c' : 'c2p');
    await page.waitForTimeout(1500);
    r.bytes_per_view = { heatmap_term_switch: await body.evaluate(() => ({ bytes: window.__lensBytes, messages: window.__lensMessages })) };
    await body.evaluate(installCounter);
    await runCommand(page, 'DeBERTa Lens: Compare Heads');
    await frame.locator('#app[data-view="heads"]').waitFor({ state: 'attached' });
    await page.waitForTimeout(1500);
    r.bytes_per_view.compare_heads = await body.evaluate(() => ({ bytes: window.__lensBytes, messages: window.__lensMessages }));
    await frame.locator('#view-heatmap').click();
    results.lengths[n] = r;
  }
  if (explains > 0) {
    // The same 512-token (longest) selection explained again and again in one session: memory must stay flat.
    const memory = {};
    await focusTab(page, lastFile);
    await selectAll(page);
    for (let k = 1; k <= explains; k++) {
      const inits = await body.evaluate(() => window.__lensInits);
      await runCommand(page, 'DeBERTa Lens: Explain Attention');
      await waitUntil(async () => (await body.evaluate(() => window.__lensInits)) > inits, {
        timeout: 120_000,
        interval: 20,
        message: `explain ${k}`,
      });
      await waitUntil(async () => isDrawn(await canvasStats(frame.locator('canvas#heatmap'))), {
        timeout: 60_000,
        interval: 20,
        message: `heatmap ${k}`,
      });
      if (k === 1 || k === Math.ceil(explains / 2) || k === explains) memory[k] = processMemory(server.pid);
    }
    results.memory_over_explains = { tokens: lengths.at(-1), ...memory };
  }
} finally {
  await lens.stop();
  if (geometryDir) fs.rmSync(geometryDir, { recursive: true, force: true });
}
fs.mkdirSync(RESULTS_DIR, { recursive: true });
fs.writeFileSync(path.join(RESULTS_DIR, 'ui-bench.json'), JSON.stringify(results, null, 2));
console.log(JSON.stringify(results, null, 2));
