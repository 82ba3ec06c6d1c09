// `npm run bench`: the engine on random-weight checkpoints of the real v3 geometries, side by side with a
// re-creation of Hugging Face's eager PyTorch forward (when Debian's python3-torch is installed). Prints one JSON
// object (and writes it to bench-results/bench.json); a Markdown table goes to stderr.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LengthReport } from '../../src/bench';
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

function runEngineBench(dir: string, lengths: number[], runs: number, threads: number, ep: string) {
  const cli = path.join(REPO, 'out', 'src', 'cli.js');
  const args = [cli, 'bench', '--model', dir, '--lengths', lengths.join(','), '--runs', String(runs), '--threads', String(threads), '--ep', ep, '--json', '--cache-dir', path.join(dir, '.cache')];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`deberta-lens bench failed on ${dir}`);
  return JSON.parse(r.stdout) as { lengths: LengthReport[] };
}

async function main() {
  const names = flag('geometries', 'v3-base,v3-large').split(',');
  // `--lengths 32,128,512` for every geometry, or per geometry: `v3-base=512,1024;v3-large=1024,2048`.
  const lengthsFlag = flag('lengths', 'v3-xsmall=128,512;v3-small=128,512;v3-base=512,1024,2048,4096;v3-large=512,1024,2048');
  const lengthsOf = (name: string) =>
    lengthsFlag.includes('=') ? (lengthsFlag.split(';').find((p) => p.startsWith(`${name}=`))?.split('=')[1] ?? '') : lengthsFlag;
  // HF's eager forward at the engine's long lengths takes minutes and GBs: by default only up to 512 tokens.
  const torchMax = Number(flag('torch-max-tokens', '512'));
  const runs = Number(flag('runs', '3'));
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
      const lengths = lengthsOf(name).split(',').filter(Boolean).map(Number);
      // In its own process, so that its peak memory is the engine's alone (not this script's checkpoint writing).
      const lens = runEngineBench(dir, lengths, runs, threads, ep);
      const entry: Record<string, unknown> = { geometry: name, lens };
      const torchLengths = lengths.filter((n) => n <= torchMax).join(',');
      if (withTorch && torchLengths) {
        process.stderr.write(`benchmarking the HF eager re-creation on ${name}…\n`);
        entry.hf_eager = runTorch(dir, torchLengths, runs, threads, {});
        entry.hf_eager_skylakex = runTorch(dir, torchLengths, runs, threads, { OPENBLAS_CORETYPE: 'SkylakeX' });
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
  const lines = [
    '',
    '| geometry | tokens | explain ms | plain forward ms | explain / forward | first layer ms | all layers ms | HF eager ms | HF eager SkylakeX ms | speed-up vs HF | states MB | layer MB | peak RSS MB (caller + runtime) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const e of report) {
    const lens = e.lens as { lengths: LengthReport[] };
    const hf = (e.hf_eager as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    const sk = (e.hf_eager_skylakex as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    for (const r of lens.lengths) {
      const h = hf.find((x) => x.tokens === r.tokens);
      const s = sk.find((x) => x.tokens === r.tokens);
      lines.push(
        `| ${String(e.geometry)} | ${r.tokens} | ${r.explain_ms_median} | ${r.forward_ms_median} | ${r.explain_over_forward.toFixed(2)}× | ${r.first_layer_ms_median} | ${r.all_layers_ms} | ${h ? h.forward_attn_ms_median : '–'} | ${s ? s.forward_attn_ms_median : '–'} | ${h ? `${(h.forward_attn_ms_median / r.explain_ms_median).toFixed(2)}×` : '–'} | ${r.states_mb} | ${r.layer_mb} | ${r.peak_rss_mb} + ${r.runtime_peak_rss_mb} |`,
      );
    }
    lines.push(slope(String(e.geometry), lens.lengths));
  }
  return `${lines.join('\n')}\n`;
}

/** How cost grows with n between the shortest and longest length: the exponent k in cost ∝ n^k. */
function slope(geometry: string, rows: LengthReport[]): string {
  if (rows.length < 2) return '';
  const a = rows[0], b = rows[rows.length - 1];
  const k = (x: number, y: number) => (Math.log(y / x) / Math.log(b.tokens / a.tokens)).toFixed(2);
  const rss = (r: LengthReport) => r.peak_rss_mb + r.runtime_peak_rss_mb;
  return `| ${geometry} slope ${a.tokens}→${b.tokens} | n^k | explain k = ${k(a.explain_ms_median, b.explain_ms_median)} | forward k = ${k(a.forward_ms_median, b.forward_ms_median)} | | first layer k = ${k(a.first_layer_ms_median, b.first_layer_ms_median)} | | | | | states k = ${k(a.states_mb, b.states_mb)} | layer k = ${k(a.layer_mb, b.layer_mb)} | RSS k = ${k(rss(a), rss(b))} |`;
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
