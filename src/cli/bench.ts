import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads, type EngineOptions, forwardOnly, openModel, type OpenModel } from '../engine';
import { graphFlops } from '../engine/graph/flops';
import { GraphBuilder } from '../engine/graph/graph-builder';
import { encodeModel, OnnxType } from '../engine/graph/onnx-proto';
import { RuntimeSession } from '../engine/runtime/session';

export interface BenchOptions {
  engine: EngineOptions;
  lengths: number[];
  runs: number;
}

export interface LengthReport {
  tokens: number;
  /** explain() as the caller sees it: tokens in, the forward pass run, every layer's input states kept in the caller. */
  explain_ms_median: number;
  explain_ms_min: number;
  /** The forward run inside the runtime process. */
  explain_run_ms_median: number;
  /** The same forward pass returning only the last hidden state: the plain-forward baseline. */
  forward_ms_median: number;
  forward_ms_min: number;
  /** explain over the plain forward (the target is ≤ 1.10). */
  explain_over_forward: number;
  /** From asking for layer 0 of a fresh result to its four matrices for all heads in the caller's memory. */
  first_layer_ms_median: number;
  /** Every layer computed one after the other (what rollout or an export streams through). */
  all_layers_ms: number;
  gflop: number;
  /** Forward FLOPs over the explain run time. */
  explain_gflops: number;
  /** explain's throughput as a share of the measured matrix-multiply throughput. */
  matmul_efficiency: number;
  /** What a result keeps (every layer's input states) and what one computed layer holds. */
  states_mb: number;
  layer_mb: number;
  /**
   * Peak resident memory of the calling process and of the runtime process through explain and one layer's view
   * at this length (on Linux both peaks are reset before each length; elsewhere they accumulate, lengths ascending).
   */
  peak_rss_mb: number;
  runtime_peak_rss_mb: number;
  /** The same after the all-layers pass as well. */
  all_layers_peak_rss_mb: number;
  all_layers_runtime_peak_rss_mb: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (x: number, digits = 1) => Number(x.toFixed(digits));
/** Peak resident memory of a process since its last resetPeak (Linux /proc; 0 where unavailable). */
function peakRssMb(pid: number | undefined = process.pid): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Resets a process's peak to its current resident memory (Linux ≥ 4.0), so that each length's row holds its own
 * peak, not that of the graph build or of a longer input before it. Elsewhere peaks accumulate.
 */
function resetPeak(pid: number | undefined): void {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    /* not Linux, or not allowed: peaks accumulate */
  }
}

/** Deterministic ids: [CLS] + pseudo-random ordinary pieces + [SEP]. */
function sampleIds(model: OpenModel, n: number, seed: number): number[] {
  const vocab = Math.min(model.checkpoint.spec.vocabSize, model.tokenizer?.vocabSize ?? Infinity);
  let x = seed >>> 0;
  const next = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % (vocab - 10)) + 5;
  return [1, ...Array.from({ length: n - 2 }, next), 2];
}

/** The machine's float32 matrix-multiply throughput through the same runtime (1024³ MatMul), GFLOP/s. */
async function matmulGflops(threads: number, dir: string): Promise<number> {
  const N = 1024;
  const g = new GraphBuilder();
  const a = g.input('a', OnnxType.FLOAT, [N, N]);
  const b = g.input('b', OnnxType.FLOAT, [N, N]);
  g.output(g.node('MatMul', [a, b]), 'c', OnnxType.FLOAT, [N, N]);
  const file = path.join(dir, 'matmul.onnx');
  fs.writeFileSync(file, encodeModel(g.build('matmul'), 20, 'deberta-lens-bench'));
  const session = new RuntimeSession({ forward: file, layer: file }, ['cpu'], threads);
  try {
    const data = new Float32Array(N * N).map((_, k) => ((k * 7919) % 1000) / 1000 - 0.5);
    const times: number[] = [];
    for (let r = 0; r < 8; r++) {
      const feeds = {
        a: { type: 'float32' as const, data: data.slice(), dims: [N, N] },
        b: { type: 'float32' as const, data: data.slice(), dims: [N, N] },
      };
      const { outputs, ms } = await session.run('forward', feeds, ['c']);
      outputs.release();
      times.push(ms);
    }
    return (2 * N ** 3) / (Math.min(...times.slice(1)) * 1e6);
  } finally {
    await session.terminate();
  }
}

export async function runBench(modelArg: string, opts: BenchOptions) {
  const threads = opts.engine.threads ?? defaultThreads();
  const engine = { ...opts.engine, threads };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-bench-'));
  try {
    // Cold: an empty graph cache (build + session). Warm: the graph is cached, only the session starts.
    const cold = await openModel(modelArg, { ...engine, cacheDir: tmp });
    const coldMs = cold.loadTimings.total_ms;
    await cold.dispose();
    const model = await openModel(modelArg, { ...engine, cacheDir: tmp });
    const warmMs = model.loadTimings.total_ms;
    const matmul = await matmulGflops(threads, tmp);
    const lengths: LengthReport[] = [];
    try {
      for (const n of [...opts.lengths].sort((x, y) => x - y)) {
        const ids = sampleIds(model, n, 1234 + n);
        resetPeak(process.pid);
        resetPeak(model.session.pid);
        if (n <= 1024) {
          // Warm-up (first-run allocations); long inputs take minutes and allocate fresh blocks every run anyway.
          (await model.explain({ ids })).release();
          await forwardOnly(model, ids);
        }
        const ex: number[] = [];
        const exRun: number[] = [];
        const fw: number[] = [];
        const first: number[] = [];
        let layerBytes = 0;
        let statesBytes = 0;
        for (let r = 0; r < opts.runs; r++) {
          // Interleaved so both see the same machine state.
          let t0 = performance.now();
          const res = await model.explain({ ids });
          ex.push(performance.now() - t0);
          exRun.push(res.timings!.run_ms);
          t0 = performance.now();
          await res.load(0);
          first.push(performance.now() - t0);
          layerBytes = res.layerBytes;
          statesBytes = res.layers.length * n * model.checkpoint.spec.hiddenSize * 4;
          res.release();
          t0 = performance.now();
          await forwardOnly(model, ids);
          fw.push(performance.now() - t0);
        }
        const viewPeak = peakRssMb();
        const viewRuntimePeak = peakRssMb(model.session.pid);
        const res = await model.explain({ ids });
        const t0 = performance.now();
        for await (const _ of res.stream()) void _;
        const allLayers = performance.now() - t0;
        res.release();
        const flops = graphFlops(model.checkpoint.spec, n);
        const gflops = flops / (median(exRun) * 1e6);
        lengths.push({
          tokens: n,
          explain_ms_median: round(median(ex)),
          explain_ms_min: round(Math.min(...ex)),
          explain_run_ms_median: round(median(exRun)),
          forward_ms_median: round(median(fw)),
          forward_ms_min: round(Math.min(...fw)),
          explain_over_forward: round(median(ex) / median(fw), 3),
          first_layer_ms_median: round(median(first)),
          all_layers_ms: round(allLayers),
          gflop: round(flops / 1e9, 2),
          explain_gflops: round(gflops),
          matmul_efficiency: round(gflops / matmul, 3),
          states_mb: round(statesBytes / 2 ** 20),
          layer_mb: round(layerBytes / 2 ** 20),
          peak_rss_mb: round(viewPeak),
          runtime_peak_rss_mb: round(viewRuntimePeak),
          all_layers_peak_rss_mb: round(peakRssMb()),
          all_layers_runtime_peak_rss_mb: round(peakRssMb(model.session.pid)),
        });
      }
    } finally {
      await model.dispose();
    }
    return {
      model: {
        name: model.summary.name,
        path: model.summary.path,
        layers: model.summary.layers,
        heads: model.summary.heads,
        hidden_size: model.summary.hidden_size,
        vocab_size: model.summary.vocab_size,
        parameters: model.summary.parameters,
      },
      execution_provider: model.info.execution_provider,
      threads,
      runs: opts.runs,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      load_ms: { cold: round(coldMs), warm: round(warmMs) },
      matmul_gflops: round(matmul),
      lengths,
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
