// One measurement of `npm run bench:task`, in its own process (so its peak memory is the engine's alone), on a
// checkpoint task-bench.ts wrote; prints one JSON object.
//   ratio:  predict on the classifier (encoder + pooler + classifier, end to end) against a plain forward of the
//           same ids, interleaved, warm-up runs dropped.
//   sweep:  the head ranking aimed at a label, one term over every head: first with the rerun graphs built into
//           an empty cache (cold), then again with them cached.
//   mlm-sweep: the masked-LM ranking over every term on a checkpoint with the MLM head (bench:sweep's).
//   memory: explain + layer 0 + predict on the kept state + predict, three times, and the peak memory of this
//           process (the caller, the tokenizer's thread included) and of the runtime process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads, forwardOnly, openModel, type OpenModel } from '../../src/engine';
import { flag, median, peakRssMb, round } from './bench-model';
import { REPO } from './task-checkpoints';

/** Resident memory now, in MB (Linux /proc; 0 elsewhere). */
function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 0) : 0;
  } catch {
    return 0;
  }
}

/** A text of the sample that tokenizes to exactly n tokens with [CLS] and [SEP] (cut at a token's end). */
async function textOf(model: OpenModel, n: number): Promise<{ text: string; ids: number[] }> {
  const tok = model.tokenizer!;
  const sample = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
  const all = sample.repeat(Math.ceil((n * 8) / sample.length) + 1);
  const tokens = await tok.encode(all);
  for (let keep = n - 2; keep > 0; keep--) {
    const text = all.slice(0, tokens[keep - 1]!.end);
    const input = await tok.modelInput(text);
    if (input.ids.length === n) return { text, ids: input.ids };
    if (input.ids.length < n) break;
  }
  throw new Error(`no cut of the sample tokenizes to ${n} tokens`);
}

async function ratio(model: OpenModel, n: number, runs: number): Promise<object> {
  const { ids } = await textOf(model, n);
  const forward = { wall: [] as number[], run: [] as number[] };
  const predict = { wall: [] as number[], run: [] as number[], head: [] as number[] };
  let label = '';
  for (let r = -3; r < runs; r++) {
    let t0 = performance.now();
    const f = await forwardOnly(model, ids);
    const fw = performance.now() - t0;
    t0 = performance.now();
    const p = await model.predict({ ids });
    const pw = performance.now() - t0;
    label = p.classification?.predicted?.label ?? '';
    if (r < 0) continue;
    forward.wall.push(fw);
    forward.run.push(f.ms);
    predict.wall.push(pw);
    predict.run.push(p.timings.forward_ms + p.timings.head_ms);
    predict.head.push(p.timings.head_ms);
  }
  return {
    tokens: n,
    runs,
    label,
    forward_ms_median: round(median(forward.wall)),
    predict_ms_median: round(median(predict.wall)),
    ratio: round(median(predict.wall) / median(forward.wall), 3),
    target_ratio: 1.05,
    forward_run_ms_median: round(median(forward.run)),
    predict_run_ms_median: round(median(predict.run)),
    head_ms_median: round(median(predict.head), 3),
    run_ratio: round(median(predict.run) / median(forward.run), 3),
  };
}

async function sweep(model: OpenModel, n: number, label: string): Promise<object> {
  const { ids } = await textOf(model, n);
  // The first ranking builds each layer's rerun graph into the cache; the second finds them there.
  const timed = async () => {
    const t0 = performance.now();
    const result = await model.sweep({ ids, terms: ['c2p'], target: { label } });
    return { result, wall: (performance.now() - t0) / 1000 };
  };
  const cold = await timed();
  const { result, wall } = await timed();
  const top = result.ranking[0];
  return {
    tokens: n,
    terms: result.terms,
    target: result.target,
    cells: result.timings.cells,
    cold_wall_s: round(cold.wall, 3),
    wall_s: round(wall, 3),
    target_s: 30,
    wall_over_target: round(wall / 30, 3),
    forward_ms: round(result.timings.forward_ms),
    rerun_ms_total: round(result.timings.rerun_ms),
    head_ms_total: round(result.timings.head_ms),
    per_cell_ms: round((wall * 1000) / result.timings.cells),
    top_cell: top && { layer: top.layer, head: top.head, term: top.term, drop: round(top.drop, 5) },
    same_ranking_twice: cold.result.ranking.every((c, k) => c.drop === result.ranking[k]?.drop),
  };
}

/** The masked-LM ranking `npm run bench:sweep -- --geometry v3-base` times (every term, at a [MASK] in the middle):
 *  the reference with a figure from a quiet machine, measured here beside the label-aimed one. */
async function mlmSweep(model: OpenModel, n: number): Promise<object> {
  const { ids } = await textOf(model, n);
  ids[Math.floor(n / 2)] = model.tokenizer!.special.mask;
  const t0 = performance.now();
  const result = await model.sweep({ ids, terms: ['all'] });
  const wall = (performance.now() - t0) / 1000;
  return {
    tokens: n,
    terms: result.terms,
    cells: result.timings.cells,
    wall_s: round(wall, 3),
    rerun_ms_total: round(result.timings.rerun_ms),
  };
}

async function memory(model: OpenModel, n: number, openMs: number): Promise<object> {
  const { text, ids } = await textOf(model, n);
  const afterOpen = { caller_rss_mb: rssMb(process.pid), runtime_rss_mb: rssMb(model.session.pid) };
  const explain: number[] = [];
  const layer0: number[] = [];
  const onKept: number[] = [];
  const predict: number[] = [];
  let label = '';
  for (let r = 0; r < 3; r++) {
    let t0 = performance.now();
    const result = await model.explain({ text });
    explain.push(performance.now() - t0);
    try {
      if (result.tokens.length !== ids.length) throw new Error(`explain read ${result.tokens.length} tokens, not ${ids.length}`);
      t0 = performance.now();
      await result.load(0);
      layer0.push(performance.now() - t0);
      t0 = performance.now();
      const kept = await model.predictExplained(result, {});
      onKept.push(performance.now() - t0);
      if (!kept.timings.forward_reused) throw new Error('the explain kept no last hidden state: predict ran the encoder again');
    } finally {
      result.release();
    }
    t0 = performance.now();
    const p = await model.predict({ text });
    predict.push(performance.now() - t0);
    label = p.classification?.predicted?.label ?? '';
  }
  const spec = model.checkpoint.spec;
  const caller = peakRssMb(process.pid);
  const runtime = peakRssMb(model.session.pid);
  return {
    tokens: ids.length,
    vocab_size: spec.vocabSize,
    embedding_mb: round((spec.vocabSize * spec.embeddingSize * 4) / 2 ** 20, 0),
    tokenizer: model.tokenizer?.kind,
    label,
    open_ms: round(openMs),
    explain_ms_median: round(median(explain)),
    layer0_ms_median: round(median(layer0)),
    predict_on_explain_ms_median: round(median(onKept), 3),
    predict_ms_median: round(median(predict)),
    after_open: afterOpen,
    caller_peak_rss_mb: caller,
    runtime_peak_rss_mb: runtime,
    peak_rss_mb: caller + runtime,
  };
}

async function main(): Promise<void> {
  const what = flag('measure', '');
  const modelDir = flag('model', '');
  const n = Number(flag('length', '128'));
  const threads = Number(flag('threads', String(defaultThreads())));
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-task-bench-cache-'));
  const t0 = performance.now();
  const model = await openModel(modelDir, { cacheDir, threads, executionProvider: 'cpu', maxTokens: 4096 });
  const openMs = performance.now() - t0;
  try {
    let row: object;
    if (what === 'ratio') row = await ratio(model, n, Number(flag('runs', '20')));
    else if (what === 'sweep') row = await sweep(model, n, flag('label', 'INJECTION'));
    else if (what === 'memory') row = await memory(model, n, openMs);
    else if (what === 'mlm-sweep') row = await mlmSweep(model, n);
    else throw new Error(`unknown --measure ${what}: ratio, sweep, mlm-sweep or memory`);
    process.stdout.write(`${JSON.stringify({ measure: what, threads, ...row })}\n`);
  } finally {
    await model.dispose();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`task bench (${flag('measure', '?')}) failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
