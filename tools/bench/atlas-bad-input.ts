// `npm run bench:atlas -- --bad-input [files,paragraph,kill,lag]`: the head atlas on the bad inputs of issue 27, as
// one JSON object. Each part runs in a process of its own (`--phase`), so its peak RSS (VmHWM, and the runtime
// process's) is its own. Everything is made in a temporary folder and removed after.
//   files      a flat folder of --files files (default 100,000; one short paragraph each): the time and RSS to list
//              it and to reach the first window, a stop after --seconds, and a resume's time to its first window
//              (the files before the checkpoint's are not read again)
//   paragraph  one paragraph of --mb MB (default 1): peak RSS while its first --tokens tokens (default 20,000) run
//              in 128-token windows (the RSS every tenth of the way: flat is the target), the checkpoint inside the
//              paragraph, a resume's time to its first window; then the time to tokenize it whole at once
//   kill       `deberta-lens atlas` on --paragraphs paragraphs (default 120) killed with SIGKILL halfway (its checkpoint,
//              written every second, holding half the windows), run
//              again: it resumes, and the atlas equals an uninterrupted run's
//   lag        the longest stall of the calling thread's event loop while the atlas runs in it and while it runs in
//              a worker thread (as the extension does), on --lag-model (default, or v3-base: random weights) for
//              --seconds, with the 100,000-file folder's listing included when `files` ran first
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildAtlas, type AtlasJson } from '../../src/analysis/atlas/atlas';
import { corpusFiles } from '../../src/analysis/atlas/corpus';
import { buildAtlasInThread } from '../../src/analysis/atlas/threaded-atlas';
import { defaultThreads, isLensError, openModel, type OpenModel } from '../../src/engine';
import { flag, round } from './bench-model';
import { writeClassifier } from './occlusion-bench';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
const CLI = path.join(REPO, 'dist', 'cli.js');
const threads = Number(flag('threads', String(defaultThreads())));
const seconds = Number(flag('seconds', '5'));

/** VmRSS and VmHWM (peak) of a process, in MB. */
function memMb(pid: number | undefined): { rss: number; peak: number } {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) / 1024;
    return { rss: round(kb('VmRSS'), 0), peak: round(kb('VmHWM'), 0) };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

const both = (model: OpenModel) => {
  const [a, b] = [memMb(process.pid), memMb(model.session.pid)];
  return { rss_mb: a.rss + b.rss, peak_rss_mb: a.peak + b.peak, this_process_peak_mb: a.peak, runtime_peak_mb: b.peak };
};

const WORDS =
  'the river rose after three days of rain and the village moved its boats up the bank while the miller kept his grain in sacks by the old mill'.split(
    ' ',
  );
const sentence = (k: number, words: number) =>
  Array.from({ length: words }, (_, w) => WORDS[(k * 7 + w * 3) % WORDS.length]).join(' ') + '.';

function writeFiles(dir: string, count: number): void {
  fs.mkdirSync(dir, { recursive: true });
  for (let f = 0; f < count; f++) fs.writeFileSync(path.join(dir, `f${String(f).padStart(6, '0')}.txt`), `${sentence(f, 12)}\n`);
}

function writeParagraph(file: string, mb: number): void {
  const parts: string[] = [];
  let size = 0;
  for (let k = 0; size < mb * 2 ** 20; k++) {
    const s = sentence(k, 10 + (k % 13));
    parts.push(s);
    size += s.length + 1;
  }
  // One paragraph: single newlines only.
  fs.writeFileSync(file, parts.map((s, k) => (k % 8 === 7 ? `${s}\n` : `${s} `)).join(''));
}

/** Runs buildAtlas until `stop(p)` says so (or the end); the time to the first window and what was done. */
async function runUntil(
  model: OpenModel,
  o: { corpus: string; checkpoint?: string; window?: number },
  stop: (p: { windows: number; tokens: number }, ms: number) => boolean,
  onWindow?: (p: { windows: number; tokens: number }) => void,
): Promise<{ first_window_ms: number; ms: number; windows: number; tokens: number; stages: string[]; finished: boolean }> {
  const abort = new AbortController();
  const t0 = performance.now();
  let first = NaN;
  let last = { windows: 0, tokens: 0 };
  const stages: string[] = [];
  let finished = true;
  let startWindows = -1;
  try {
    await buildAtlas(model, {
      ...o,
      signal: abort.signal,
      onStage: (line) => stages.push(`${round(performance.now() - t0, 0)} ms: ${line}`),
      onProgress: ({ windows, tokens }) => {
        if (startWindows < 0) {
          first = performance.now() - t0;
          startWindows = windows - 1;
        }
        last = { windows, tokens };
        onWindow?.(last);
        if (stop({ windows: windows - startWindows, tokens }, performance.now() - t0)) abort.abort();
      },
    });
  } catch (e) {
    if (!(isLensError(e) && e.code === 'cancelled')) throw e;
    finished = false;
  }
  return { first_window_ms: round(first, 0), ms: round(performance.now() - t0, 0), ...last, stages, finished };
}

async function phaseFiles(tmp: string): Promise<object> {
  const corpus = path.join(tmp, 'files');
  const t0 = performance.now();
  const { files } = corpusFiles(corpus, () => undefined);
  const listMs = performance.now() - t0;
  const afterList = memMb(process.pid);
  const model = await openModel('default', { cacheDir: path.join(tmp, 'cache'), threads, executionProvider: 'cpu' });
  try {
    const checkpoint = path.join(tmp, 'files.partial');
    const first = await runUntil(model, { corpus, checkpoint }, (_, ms) => ms > seconds * 1000);
    const kept = JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { texts: number; file: string };
    const resumed = await runUntil(model, { corpus, checkpoint }, (p) => p.windows >= 3);
    return {
      files: files.length,
      list_ms: round(listMs, 0),
      rss_after_list_mb: afterList.rss,
      run: { ...first, checkpoint: { texts: kept.texts, file: kept.file } },
      resume: resumed,
      ...both(model),
    };
  } finally {
    await model.dispose();
  }
}

async function phaseParagraph(tmp: string): Promise<object> {
  const file = path.join(tmp, 'paragraph.txt');
  const tokenLimit = Number(flag('tokens', '20000'));
  const model = await openModel('default', { cacheDir: path.join(tmp, 'cache'), threads, executionProvider: 'cpu' });
  try {
    const checkpoint = path.join(tmp, 'paragraph.partial');
    const curve: { tokens: number; rss_mb: number }[] = [];
    let mark = 0;
    const run = await runUntil(
      model,
      { corpus: file, checkpoint, window: 128 },
      (p) => p.tokens >= tokenLimit,
      (p) => {
        if (p.tokens >= mark) {
          curve.push({ tokens: p.tokens, rss_mb: both(model).rss_mb });
          mark += tokenLimit / 10;
        }
      },
    );
    const peak = both(model);
    const kept = JSON.parse(fs.readFileSync(checkpoint, 'utf8')) as { next: number; piece: number; windows: number };
    const resumed = await runUntil(model, { corpus: file, checkpoint, window: 128 }, (p) => p.windows >= 3);
    // The whole paragraph tokenized at once, after the peak is read (the atlas never holds all its tokens).
    const t0 = performance.now();
    const pieces = await model.tokenizer!.encode(fs.readFileSync(file, 'utf8'));
    const tokenizeMs = performance.now() - t0;
    return {
      bytes: fs.statSync(file).size,
      paragraph_tokens: pieces.length,
      windows_in_paragraph: Math.ceil(pieces.length / 126),
      tokenize_ms: round(tokenizeMs, 0),
      run: { ...run, checkpoint: kept },
      rss_curve: curve,
      ...peak,
      resume: { first_window_ms: resumed.first_window_ms, windows: resumed.windows },
    };
  } finally {
    await model.dispose();
  }
}

function cliRun(args: string[]): { code: number | null; ms: number; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, ms: round(performance.now() - t0, 0), stderr: r.stderr.trim() };
}

async function phaseKill(tmp: string): Promise<object> {
  const corpus = path.join(tmp, 'kill');
  fs.mkdirSync(corpus);
  const paragraphs = Number(flag('paragraphs', '120'));
  for (let f = 0; f * 20 < paragraphs; f++)
    fs.writeFileSync(
      path.join(corpus, `part-${f}.md`),
      Array.from({ length: Math.min(20, paragraphs - f * 20) }, (_, k) => sentence(f * 20 + k, 40 + ((f + k) % 50))).join('\n\n'),
    );
  const args = ['atlas', '--model', 'default', '--threads', String(threads), '--corpus', corpus, '--cache-dir', path.join(tmp, 'cache')];
  const whole = path.join(tmp, 'kill-whole.json');
  const uninterrupted = cliRun([...args, '--out', whole]);
  const out = path.join(tmp, 'kill-resumed.json');
  // Killed once its checkpoint (written every second) holds half the windows of the uninterrupted run.
  const a = JSON.parse(fs.readFileSync(whole, 'utf8')) as AtlasJson;
  const partial = () => {
    try {
      return JSON.parse(fs.readFileSync(`${out}.partial`, 'utf8')) as { texts: number; windows: number };
    } catch {
      return undefined;
    }
  };
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args, '--out', out, '--checkpoint-every', '1'], { stdio: 'ignore' });
  while ((partial()?.windows ?? 0) < a.windows / 2 && performance.now() - t0 < 600_000) await new Promise((r) => setTimeout(r, 50));
  const killAt = performance.now() - t0;
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const kept = partial()!;
  const resumed = cliRun([...args, '--out', out]);
  const b = JSON.parse(fs.readFileSync(out, 'utf8')) as AtlasJson;
  return {
    paragraphs,
    uninterrupted_ms: uninterrupted.ms,
    killed_after_ms: round(killAt, 0),
    checkpoint_at_kill: { texts: kept.texts, windows: kept.windows, of_windows: a.windows },
    resumed_ms: resumed.ms,
    resumed_stderr: resumed.stderr,
    equal: JSON.stringify(a) === JSON.stringify(b),
  };
}

async function phaseLag(tmp: string): Promise<object> {
  const lagModel = flag('lag-model', 'default');
  let dir = 'default';
  if (lagModel !== 'default') {
    dir = path.join(tmp, `${lagModel}-model`);
    if (!fs.existsSync(dir)) writeClassifier(dir, lagModel);
  }
  const engine = { cacheDir: path.join(tmp, 'cache'), threads, executionProvider: 'cpu' as const };
  const corpora = [path.join(tmp, 'files'), path.join(tmp, 'lag')].filter((c) => fs.existsSync(c));
  if (!fs.existsSync(path.join(tmp, 'lag'))) {
    fs.mkdirSync(path.join(tmp, 'lag'));
    fs.writeFileSync(path.join(tmp, 'lag', 'a.md'), Array.from({ length: 200 }, (_, k) => sentence(k, 90)).join('\n\n'));
    corpora.push(path.join(tmp, 'lag'));
  }
  const out: Record<string, object> = {};
  // Warm: the graph built and cached, so both runs measure the atlas alone.
  const warm = await openModel(dir, engine);
  await warm.dispose();
  for (const corpus of corpora) {
    const row: Record<string, object> = {};
    for (const where of ['this thread', 'worker thread'] as const) {
      // Two figures: the whole run (opening the model and listing included) and from the first window on.
      const whole = monitorEventLoopDelay({ resolution: 5 });
      const windowsOnly = monitorEventLoopDelay({ resolution: 5 });
      const abort = new AbortController();
      let windows = 0;
      const t0 = performance.now();
      const onProgress = (p: { windows: number }) => {
        if (windows === 0) windowsOnly.enable();
        windows = p.windows;
        if (performance.now() - t0 > seconds * 1000) abort.abort();
      };
      whole.enable();
      try {
        if (where === 'this thread') {
          const model = await openModel(dir, engine);
          try {
            await buildAtlas(model, { corpus, signal: abort.signal, onProgress });
          } finally {
            await model.dispose();
          }
        } else await buildAtlasInThread({ modelDir: dir, engine, options: { corpus } }, { signal: abort.signal, onProgress });
      } catch (e) {
        if (!(isLensError(e) && e.code === 'cancelled')) throw e;
      }
      whole.disable();
      windowsOnly.disable();
      const ms = (h: typeof whole) => ({ max: round(h.max / 1e6, 1), p99: round(h.percentile(99) / 1e6, 1), mean: round(h.mean / 1e6, 2) });
      row[where] = { windows, stall_ms_whole_run: ms(whole), stall_ms_from_first_window: ms(windowsOnly) };
    }
    out[path.basename(corpus)] = row;
  }
  return { model: lagModel, window: 128, seconds, ...out };
}

/** The parent: makes the inputs once, runs each phase in its own process, prints one JSON object. */
export async function badInputBench(): Promise<void> {
  const phases = (process.argv[process.argv.indexOf('--bad-input') + 1] ?? '').startsWith('--')
    ? ['files', 'paragraph', 'kill', 'lag']
    : (process.argv[process.argv.indexOf('--bad-input') + 1] ?? 'files,paragraph,kill,lag').split(',');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-atlas-bad-'));
  const report: Record<string, unknown> = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    threads,
    load_before: os.loadavg().map((x) => round(x, 1)),
  };
  try {
    if (phases.includes('files') || phases.includes('lag')) {
      const t0 = performance.now();
      writeFiles(path.join(tmp, 'files'), Number(flag('files', '100000')));
      report.files_written_ms = round(performance.now() - t0, 0);
    }
    if (phases.includes('paragraph')) writeParagraph(path.join(tmp, 'paragraph.txt'), Number(flag('mb', '1')));
    for (const phase of phases) {
      const r = spawnSync(process.execPath, [__filename, '--phase', phase, '--tmp', tmp, ...process.argv.slice(2)], {
        encoding: 'utf8',
        maxBuffer: 64 * 2 ** 20,
      });
      if (r.status !== 0) throw new Error(`phase ${phase}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
      report[phase] = JSON.parse(r.stdout) as object;
    }
    report.load_after = os.loadavg().map((x) => round(x, 1));
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function phase(name: string, tmp: string): Promise<void> {
  const run = { files: phaseFiles, paragraph: phaseParagraph, kill: phaseKill, lag: phaseLag }[name];
  if (!run) throw new Error(`unknown part ${name}: files, paragraph, kill or lag`);
  process.stdout.write(`${JSON.stringify(await run(tmp))}\n`);
}

if (require.main === module) {
  const k = process.argv.indexOf('--phase');
  phase(process.argv[k + 1] ?? '', flag('tmp', os.tmpdir())).catch((e) => {
    process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  });
}
