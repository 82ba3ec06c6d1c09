// `npm run bench:patch`: activation patching on a random-weight sequence classifier of a real geometry (default
// v3-base). The causal trace (resid:L@i for every layer and position, 64 tokens: 13 × 64 reruns on v3-base) batched
// against one rerun per cell, interleaved in one run; then the head-term grid (every head × c2c, c2p, p2c) at 128
// tokens. Targets: trace ≤ 60 s and ≥ 3× faster than one by one; head grid ≤ 90 s. Prints one JSON object, with
// gemm_ceiling: the runtime's MatMul throughput at one variant's rows against a batch's (./gemm-ceiling.ts).
// Then the flow trace on the bundled model at 128 tokens (target ≤ 20 s; --flow-only runs just that).
//   npm run bench:patch -- [--geometry v3-base] [--trace-length 64] [--heads-length 128] [--threads N] [--skip-single]
//                          [--flow-only] [--no-flow] [--flow-length 128] [--ep cpu|webgpu|cuda|auto]
// --ep runs the model (and the reruns) on that execution provider; the JSON names the one the reruns actually used,
// and each section is also logged to stderr as it ends (a run cut short keeps what it measured).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads, openModel, type ExecutionProviderSetting, type PatchResult } from '../../src/engine';
import { flag, round } from './bench-model';
import { writeClassifier } from './occlusion-bench';
import { gemmGflops } from './gemm-ceiling';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
const traceLength = Number(flag('trace-length', '64'));
const headsLength = Number(flag('heads-length', '128'));
const geometry = flag('geometry', 'v3-base');
const threads = Number(flag('threads', String(defaultThreads())));
const skipSingle = process.argv.includes('--skip-single');
const flowOnly = process.argv.includes('--flow-only');
const flowLength = Number(flag('flow-length', '128'));
const executionProvider = flag('ep', 'cpu') as ExecutionProviderSetting;
const noFlow = process.argv.includes('--no-flow');

/** The flow on the bundled masked-LM model: a [MASK] in the middle of `flowLength` tokens of the sample text. */
async function flowBench(cacheDir: string): Promise<object> {
  const model = await openModel('default', { cacheDir, threads, executionProvider });
  try {
    const tok = model.tokenizer!;
    const text = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
    const body = (await tok.encode(text.repeat(20))).map((t) => t.id);
    const ids = [tok.special.cls, ...body.slice(0, flowLength - 2), tok.special.sep];
    ids[Math.floor(flowLength / 2)] = tok.special.mask!;
    await model.patch({ ids: ids.slice(0, 8).concat([tok.special.mask, tok.special.sep]), trace: 'flow' });
    const t0 = performance.now();
    // A corrupted text (the token before the [MASK] swapped) sets the threshold: 0.1 × |clean − corrupt|.
    const corruptIds = ids.slice();
    corruptIds[Math.floor(flowLength / 2) - 1] = ids[Math.floor(flowLength / 2) - 2]!;
    const r = await model.patch({ ids, corruptIds, trace: 'flow' });
    const g = r.grid!;
    return {
      model: 'default (bundled)',
      tokens: flowLength,
      wall_s: round((performance.now() - t0) / 1000, 3),
      knockouts: g.kind === 'flow' ? g.knockouts : NaN,
      edges_kept: g.kind === 'flow' ? g.edges.length : NaN,
      threshold: g.kind === 'flow' ? g.threshold : NaN,
      runs: r.timings.runs,
      batch_size: r.timings.batch_size,
      provider: r.timings.rerun_provider,
      target_s: 20,
    };
  } finally {
    await model.dispose();
  }
}

const maxDiff = (a: PatchResult, b: PatchResult) => {
  const [ga, gb] = [a.grid!, b.grid!];
  if (ga.kind !== 'resid' || gb.kind !== 'resid') return NaN;
  return ga.value.reduce((m, row, l) => row.reduce((mm, v, i) => Math.max(mm, Math.abs(v - gb.value[l]![i]!)), m), 0);
};

async function main() {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-patch-bench-'));
  const dir = path.join(cacheDir, `${geometry}-seqcls`);
  const out: Record<string, unknown> = {};
  if (flowOnly) {
    out.flow = await flowBench(cacheDir);
    fs.rmSync(cacheDir, { recursive: true, force: true });
    process.stdout.write(
      `${JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, threads, load: os.loadavg(), ...out }, null, 2)}\n`,
    );
    return;
  }
  writeClassifier(dir, geometry);
  const model = await openModel(dir, { cacheDir, threads, executionProvider });
  try {
    const tok = model.tokenizer!;
    const text = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
    const body = (await tok.encode(text.repeat(20))).map((t) => t.id);
    const pair = (n: number) => {
      const ids = [tok.special.cls, ...body.slice(0, n - 2), tok.special.sep];
      const corruptIds = ids.slice();
      corruptIds[5] = ids[6]!; // one token swapped for another: the corrupted text
      return { ids, corruptIds };
    };
    // Warm-up: builds and caches the patch graphs and starts their processes (a first use's cost), warms the encoder.
    // The trace's processes last: where memory keeps only some up, those are the ones kept.
    await model.patch({ ...pair(8), trace: 'heads' });
    await model.patch({ ...pair(8), trace: 'resid' });

    const log = (line: string) => process.stderr.write(`bench:patch: ${line} (${new Date().toISOString()})\n`);
    // The ceiling: MatMul throughput at one variant's rows (64) against a batch's (32 × 64), [·, 768] · [768, 3072].
    const gemm = await gemmGflops([traceLength, 32 * traceLength], 768, 3072, threads, cacheDir);
    out.gemm_ceiling = {
      rows_one_variant: traceLength,
      rows_batch: 32 * traceLength,
      gflops_one_variant: round(gemm[traceLength]!, 1),
      gflops_batch: round(gemm[32 * traceLength]!, 1),
      most_batching_can_gain: round(gemm[32 * traceLength]! / gemm[traceLength]!, 3),
    };
    log('warmed up; causal trace batched');
    const t0 = performance.now();
    const batched = await model.patch({ ...pair(traceLength), trace: 'resid' });
    const batchedS = (performance.now() - t0) / 1000;
    let single: PatchResult | undefined, singleS: number | undefined;
    if (!skipSingle) {
      log(`batched ${round(batchedS, 1)} s; one by one`);
      const t1 = performance.now();
      single = await model.patch({ ...pair(traceLength), trace: 'resid', batch: false });
      singleS = (performance.now() - t1) / 1000;
    }
    out.causal_trace = {
      tokens: traceLength,
      reruns: batched.timings.reruns,
      batched_wall_s: round(batchedS, 3),
      batched_runs: batched.timings.runs,
      batch_size: batched.timings.batch_size,
      batched_rerun_ms: round(batched.timings.rerun_ms),
      provider: batched.timings.rerun_provider,
      ...(single && singleS !== undefined
        ? {
            one_by_one_wall_s: round(singleS, 3),
            one_by_one_rerun_ms: round(single.timings.rerun_ms),
            speedup: round(singleS / batchedS, 3),
            max_value_diff: maxDiff(batched, single),
          }
        : {}),
      target_batched_s: 60,
      target_speedup: 3,
    };
    log(`causal trace ${JSON.stringify(out.causal_trace)}`);
    log('head grid');
    const t2 = performance.now();
    const heads = await model.patch({ ...pair(headsLength), trace: 'heads' });
    out.head_grid = {
      tokens: headsLength,
      reruns: heads.timings.reruns,
      wall_s: round((performance.now() - t2) / 1000, 3),
      runs: heads.timings.runs,
      batch_size: heads.timings.batch_size,
      rerun_ms: round(heads.timings.rerun_ms),
      provider: heads.timings.rerun_provider,
      target_s: 90,
    };
    log(`head grid ${JSON.stringify(out.head_grid)}`);
    out.provider = { main: model.session.provider, errors: model.session.providerErrors };
  } finally {
    await model.dispose();
  }
  try {
    if (!noFlow) out.flow = await flowBench(cacheDir);
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
  const report = {
    date: new Date().toISOString(),
    model: `${geometry} (random weights, sequence classification)`,
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    threads,
    load: os.loadavg(),
    ...out,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

if (require.main === module)
  main().catch((e) => {
    process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  });
