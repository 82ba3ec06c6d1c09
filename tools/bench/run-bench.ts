// `npm run bench`: the engine on random-weight checkpoints of the real v3 geometries, side by side with a
// re-creation of Hugging Face's eager PyTorch forward (when Debian's python3-torch is installed). Prints one JSON
// object (and writes it to bench-results/bench.json); a Markdown table goes to stderr.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type LengthReport, runBench } from '../../src/bench';
import type { ExecutionProviderSetting } from '../../src/engine/types';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');

function flag(name: string, fallback: string): string {
  const k = process.argv.indexOf(`--${name}`);
  return k > 0 && process.argv[k + 1] ? process.argv[k + 1] : fallback;
}

function torchAvailable(): boolean {
  return spawnSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
}

function runTorch(dir: string, lengths: string, runs: number, threads: number, env: Record<string, string | undefined>) {
  const r = spawnSync('/usr/bin/python3', [path.join(REPO, 'tools/bench/hf_eager.py'), '--model', dir, '--lengths', lengths, '--runs', String(runs), '--threads', String(threads)], {
    env: { ...process.env, ...env, OMP_NUM_THREADS: String(threads) },
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) return { error: (r.stderr || '').trim().split('\n').pop() };
  return JSON.parse(r.stdout) as unknown;
}

async function main() {
  const names = flag('geometries', 'v3-xsmall,v3-base,v3-large').split(',');
  const lengths = flag('lengths', '32,128,512');
  const runs = Number(flag('runs', '5'));
  const threads = Number(flag('threads', String(os.availableParallelism?.() ?? os.cpus().length)));
  const ep = flag('ep', 'cpu') as ExecutionProviderSetting;
  const withTorch = flag('torch', 'auto') !== 'no' && torchAvailable();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-geom-'));
  const report: Record<string, unknown>[] = [];
  try {
    for (const name of names) {
      const g = V3_GEOMETRIES[name];
      if (!g) throw new Error(`unknown geometry ${name}: use ${Object.keys(V3_GEOMETRIES).join(', ')}`);
      const dir = path.join(root, name);
      process.stderr.write(`writing random ${name} checkpoint…\n`);
      writeV3Checkpoint(dir, g);
      process.stderr.write(`benchmarking deberta-lens on ${name}…\n`);
      const lens = await runBench(dir, { engine: { threads, executionProvider: ep }, lengths: lengths.split(',').map(Number), runs });
      const entry: Record<string, unknown> = { geometry: name, lens };
      if (withTorch) {
        process.stderr.write(`benchmarking the HF eager re-creation on ${name}…\n`);
        entry.hf_eager = runTorch(dir, lengths, runs, threads, {});
        entry.hf_eager_skylakex = runTorch(dir, lengths, runs, threads, { OPENBLAS_CORETYPE: 'SkylakeX' });
      }
      report.push(entry);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  const out = { date: new Date().toISOString(), cpu: os.cpus()[0]?.model, cores: os.cpus().length, threads, runs, torch: withTorch, results: report };
  fs.mkdirSync(path.join(REPO, 'bench-results'), { recursive: true });
  fs.writeFileSync(path.join(REPO, 'bench-results', 'bench.json'), JSON.stringify(out, null, 2));
  process.stderr.write(table(report));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

type TorchRow = { tokens: number; forward_attn_ms_median: number; forward_terms_ms_median: number };

function table(report: Record<string, unknown>[]): string {
  const lines = ['', '| geometry | tokens | explain ms (run in ORT; all tensors read) | forward ms | term overhead run / delivered (floor) | GFLOP/s (share of matmul peak) | HF eager ms (+terms) | HF eager SkylakeX ms | speed-up vs HF | peak RSS MB (caller + runtime) |', '|---|---|---|---|---|---|---|---|---|---|'];
  for (const e of report) {
    const lens = e.lens as { lengths: LengthReport[] };
    const hf = (e.hf_eager as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    const sk = (e.hf_eager_skylakex as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    for (const r of lens.lengths) {
      const h = hf.find((x) => x.tokens === r.tokens);
      const s = sk.find((x) => x.tokens === r.tokens);
      lines.push(
        `| ${e.geometry as string} | ${r.tokens} | ${r.explain_ms_median} (${r.explain_run_ms_median}; ${r.explain_read_all_ms_median}) | ${r.forward_ms_median} | ${(r.term_overhead * 100).toFixed(1)}% / ${(r.term_overhead_delivered * 100).toFixed(1)}% (${(r.term_overhead_floor * 100).toFixed(1)}%) | ${r.explain_gflops} (${(r.matmul_efficiency * 100).toFixed(0)}%) | ${h ? `${h.forward_attn_ms_median} (${h.forward_terms_ms_median})` : '–'} | ${s ? s.forward_attn_ms_median : '–'} | ${h ? `${(h.forward_attn_ms_median / r.explain_ms_median).toFixed(2)}×` : '–'} | ${r.peak_rss_mb} + ${r.runtime_peak_rss_mb} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
