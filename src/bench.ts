import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineOptions } from './engine/api';
import { forwardOnly } from './engine/explain';
import { graphFlops } from './engine/graph/flops';
import { GraphBuilder } from './engine/graph/graph-builder';
import { encodeModel, OnnxType } from './engine/graph/onnx-proto';
import { openModel, type OpenModel } from './engine/model';
import { RuntimeSession } from './engine/runtime/session';

export interface BenchOptions {
  engine: EngineOptions;
  lengths: number[];
  runs: number;
}

export interface LengthReport {
  tokens: number;
  /** explain() as the caller sees it: tokens in, every layer's terms and probs in the caller's memory. */
  explain_ms_median: number;
  explain_ms_min: number;
  /** The onnxruntime run inside the runtime process, onnxruntime-node copying the outputs into JS memory included. */
  explain_run_ms_median: number;
  /** The runtime process writing the outputs to the spill file the caller reads them from. */
  explain_spill_ms_median: number;
  /** explain() and then every tensor read into the caller's memory (tensors are read on first access). */
  explain_read_all_ms_median: number;
  forward_ms_median: number;
  forward_ms_min: number;
  /** explain run over forward run, minus one: what computing and keeping the per-term outputs costs. */
  term_overhead: number;
  /** explain end to end over forward end to end, minus one: the above plus delivering the tensors. */
  term_overhead_delivered: number;
  gflop: number;
  /** Graph FLOPs over the explain run time. */
  explain_gflops: number;
  /** explain's throughput as a share of the measured matrix-multiply throughput. */
  matmul_efficiency: number;
  output_mb: number;
  /**
   * What onnxruntime-node's hand-over of these outputs costs (it allocates a new zero-filled ArrayBuffer per
   * output and copies into it), estimated as allocate + copy of the same blocks in this (calling) process, best of
   * 4. An estimate only: this process lacks the runtime process's allocator settings and has just read every
   * tensor, so the figure runs high when fresh pages are slow; the run overhead itself is the measured cost.
   */
  output_copy_floor_ms: number;
  /** That estimate over the forward run. */
  term_overhead_floor: number;
  /** Peak resident memory of the calling process and of the runtime process. */
  peak_rss_mb: number;
  runtime_peak_rss_mb: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x: number, digits = 1) => Number(x.toFixed(digits));
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

/** Peak resident memory of the runtime process (Linux /proc; 0 where unavailable). */
function childPeakRssMb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Allocating and filling `count` float32 blocks of `size` elements from an existing one, best of 4 (warm). */
function copyFloorMs(count: number, size: number): number {
  const src = new Float32Array(size).fill(1);
  let best = Infinity;
  for (let r = 0; r < 4; r++) {
    const t0 = performance.now();
    const blocks: Float32Array[] = [];
    for (let k = 0; k < count; k++) {
      const b = new Float32Array(size);
      b.set(src);
      blocks.push(b);
    }
    best = Math.min(best, performance.now() - t0);
  }
  return best;
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
      const feeds = { a: { type: 'float32' as const, data: data.slice(), dims: [N, N] }, b: { type: 'float32' as const, data: data.slice(), dims: [N, N] } };
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
  const threads = opts.engine.threads ?? Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
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
      for (const n of opts.lengths) {
        const ids = sampleIds(model, n, 1234 + n);
        (await model.explain({ ids })).release(); // warm-up: first-run allocations
        await forwardOnly(model, ids);
        const ex: number[] = [];
        const exRun: number[] = [];
        const exSpill: number[] = [];
        const exAll: number[] = [];
        const fw: number[] = [];
        const fwRun: number[] = [];
        let outputBytes = 0;
        for (let r = 0; r < opts.runs; r++) {
          // Interleaved so both see the same machine state. Each result is released before the next run, as the
          // extension does with results it no longer shows, so its output file is reused warm.
          let t0 = performance.now();
          const res = await model.explain({ ids });
          ex.push(performance.now() - t0);
          exRun.push(res.timings!.run_ms);
          exSpill.push(res.timings!.spill_ms);
          res.release();
          t0 = performance.now();
          fwRun.push((await forwardOnly(model, ids)).ms);
          fw.push(performance.now() - t0);
        }
        // Separately, so the caller's fresh memory for every tensor does not disturb the comparison above.
        for (let r = 0; r < opts.runs; r++) {
          const t0 = performance.now();
          const res = await model.explain({ ids });
          outputBytes = 0;
          for (const l of res.layers) for (const k of [...res.terms, 'probs'] as const) outputBytes += res.tensor(l, k).byteLength;
          exAll.push(performance.now() - t0);
        }
        const flops = graphFlops(model.checkpoint.spec, n);
        const H = model.checkpoint.spec.numHeads;
        const floor = copyFloorMs(outputBytes / (4 * H * n * n), H * n * n);
        const gflops = flops / (median(exRun) * 1e6);
        lengths.push({
          tokens: n,
          explain_ms_median: round(median(ex)),
          explain_ms_min: round(Math.min(...ex)),
          explain_run_ms_median: round(median(exRun)),
          explain_spill_ms_median: round(median(exSpill)),
          explain_read_all_ms_median: round(median(exAll)),
          forward_ms_median: round(median(fw)),
          forward_ms_min: round(Math.min(...fw)),
          term_overhead: round(median(exRun) / median(fwRun) - 1, 3),
          term_overhead_delivered: round(median(ex) / median(fw) - 1, 3),
          gflop: round(flops / 1e9, 2),
          explain_gflops: round(gflops),
          matmul_efficiency: round(gflops / matmul, 3),
          output_mb: round(outputBytes / 2 ** 20),
          output_copy_floor_ms: round(floor),
          term_overhead_floor: round(floor / median(fwRun), 3),
          peak_rss_mb: round(peakRssMb()),
          runtime_peak_rss_mb: round(childPeakRssMb(model.session.pid)),
        });
      }
    } finally {
      await model.dispose();
    }
    return {
      model: { name: model.summary.name, path: model.summary.path, layers: model.summary.layers, heads: model.summary.heads, hidden_size: model.summary.hidden_size, vocab_size: model.summary.vocab_size, parameters: model.summary.parameters },
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
