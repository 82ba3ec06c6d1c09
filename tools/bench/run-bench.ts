// `npm run bench`: the engine on random-weight checkpoints of the real v3 geometries, side by side with a
// re-creation of Hugging Face's eager PyTorch forward (when Debian's python3-torch is installed). Prints one JSON
// object (and writes it to bench-results/bench.json); a Markdown table goes to stderr.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LengthReport } from '../../src/cli/bench';
import { defaultThreads, type ExecutionProviderSetting } from '../../src/engine';
import { first, last } from '../../src/shared/checked';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');

function flag(name: string, fallback: string): string {
  const k = process.argv.indexOf(`--${name}`);
  return (k > 0 && process.argv[k + 1]) || fallback;
}

/** Why the HF eager baseline cannot run here (no python3, or no torch), or undefined when it can. */
function torchMissing(): string | undefined {
  const r = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
  if (r.error) return '/usr/bin/python3 not found';
  if (r.status !== 0) return 'torch is not installed for /usr/bin/python3 (Debian: apt install python3-torch)';
  return undefined;
}

function runTorch(dir: string, lengths: string, runs: number, threads: number, env: Record<string, string | undefined>) {
  const r = spawnSync(
    '/usr/bin/python3',
    [
      path.join(REPO, 'tools/bench/hf_eager.py'),
      '--model',
      dir,
      '--lengths',
      lengths,
      '--runs',
      String(runs),
      '--threads',
      String(threads),
    ],
    {
      env: { ...process.env, ...env, OMP_NUM_THREADS: String(threads) },
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    },
  );
  if (r.status !== 0) return { error: (r.stderr || '').trim().split('\n').pop() };
  return JSON.parse(r.stdout) as unknown;
}

function runEngineBench(dir: string, lengths: number[], runs: number, threads: number, ep: string) {
  const cli = path.join(REPO, 'out', 'src', 'cli.js');
  const args = [
    cli,
    'bench',
    '--model',
    dir,
    '--lengths',
    lengths.join(','),
    '--runs',
    String(runs),
    '--threads',
    String(threads),
    '--ep',
    ep,
    '--json',
    '--cache-dir',
    path.join(dir, '.cache'),
  ];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`deberta-lens bench failed on ${dir}`);
  return JSON.parse(r.stdout) as { lengths: LengthReport[] };
}

async function main() {
  const names = flag('geometries', 'v3-base,v3-large').split(',');
  // `--lengths 32,128,512` for every geometry, or per geometry: `v3-base=512,1024;v3-large=1024,2048`.
  const lengthsFlag = flag('lengths', 'v3-xsmall=128,512;v3-small=128,512;v3-base=512,1024,2048,4096;v3-large=512,1024,2048');
  const lengthsOf = (name: string) =>
    lengthsFlag.includes('=')
      ? (lengthsFlag
          .split(';')
          .find((p) => p.startsWith(`${name}=`))
          ?.split('=')[1] ?? '')
      : lengthsFlag;
  // HF's eager forward at the engine's long lengths takes minutes and GBs: by default only up to 512 tokens.
  const torchMax = Number(flag('torch-max-tokens', '512'));
  const runs = Number(flag('runs', '3'));
  const threads = Number(flag('threads', String(defaultThreads())));
  const ep = flag('ep', 'cpu') as ExecutionProviderSetting;
  const missing = flag('torch', 'auto') === 'no' ? 'skipped with --torch no' : torchMissing();
  const withTorch = missing === undefined;
  if (missing) process.stderr.write(`HF eager baseline skipped: ${missing}; the engine's figures follow alone.\n`);
  const loadBefore = os.loadavg();
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
      const entry: Record<string, unknown> = { geometry: name, lens, slope: slopes(lens.lengths) };
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
  // The machine's load average (1, 5, 15 min) before and after: figures from a shared machine need it beside them.
  const load = { before: loadBefore.map((v) => Number(v.toFixed(2))), after: os.loadavg().map((v) => Number(v.toFixed(2))) };
  const out = {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    threads,
    runs,
    torch: withTorch,
    torch_skipped: missing,
    load,
    results: report,
  };
  fs.mkdirSync(path.join(REPO, 'bench-results'), { recursive: true });
  fs.writeFileSync(path.join(REPO, 'bench-results', 'bench.json'), JSON.stringify(out, null, 2));
  process.stderr.write(table(report));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

type TorchRow = { tokens: number; forward_attn_ms_median: number; forward_terms_ms_median: number };

const gb = (mb: number) => (mb / 1024).toFixed(2);

function table(report: Record<string, unknown>[]): string {
  const lines = [
    '',
    '| geometry | tokens | explain ms | plain forward ms | explain / forward | first layer ms | all layers s | HF eager ms (SkylakeX BLAS) | explain vs HF | states MB | one layer MB | peak RSS GB, explain + one layer (caller + runtime) | peak RSS GB after all layers |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const e of report) {
    const lens = e.lens as { lengths: LengthReport[] };
    const hf = (e.hf_eager as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    const sk = (e.hf_eager_skylakex as { lengths?: TorchRow[] } | undefined)?.lengths ?? [];
    for (const r of lens.lengths) {
      const h = hf.find((x) => x.tokens === r.tokens);
      const s = sk.find((x) => x.tokens === r.tokens);
      const hfCell = h ? `${h.forward_attn_ms_median}${s ? ` (${s.forward_attn_ms_median})` : ''}` : '–';
      const view = `${gb(r.peak_rss_mb)} + ${gb(r.runtime_peak_rss_mb)} = ${gb(r.peak_rss_mb + r.runtime_peak_rss_mb)}`;
      const all = gb(r.all_layers_peak_rss_mb + r.all_layers_runtime_peak_rss_mb);
      lines.push(
        `| ${String(e.geometry)} | ${r.tokens} | ${r.explain_ms_median} | ${r.forward_ms_median} | ${r.explain_over_forward.toFixed(2)}× | ${r.first_layer_ms_median} | ${(r.all_layers_ms / 1000).toFixed(1)} | ${hfCell} | ${h ? `${(h.forward_attn_ms_median / r.explain_ms_median).toFixed(2)}×` : '–'} | ${r.states_mb} | ${r.layer_mb} | ${view} | ${all} |`,
      );
    }
    lines.push(slopeRow(String(e.geometry), lens.lengths));
  }
  return `${lines.join('\n')}\n`;
}

/** The exponent k of cost ∝ n^k, least-squares fitted to log cost against log n over every length measured. */
export function fittedExponent(ns: number[], costs: number[]): number {
  const xs = ns.map(Math.log),
    ys = costs.map(Math.log);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length,
    my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0,
    sxx = 0;
  xs.forEach((x, k) => ((sxy += (x - mx) * (ys[k]! - my)), (sxx += (x - mx) ** 2)));
  return sxy / sxx;
}

/** How each cost grows with n (fitted exponents; absent with fewer than two lengths). */
function slopes(rows: LengthReport[]): Record<string, number> | undefined {
  if (rows.length < 2) return undefined;
  const ns = rows.map((r) => r.tokens);
  const costs: Record<string, (r: LengthReport) => number> = {
    explain: (r) => r.explain_ms_median,
    forward: (r) => r.forward_ms_median,
    first_layer: (r) => r.first_layer_ms_median,
    all_layers: (r) => r.all_layers_ms,
    states: (r) => r.states_mb,
    layer: (r) => r.layer_mb,
    peak_rss: (r) => r.peak_rss_mb + r.runtime_peak_rss_mb,
    all_layers_peak_rss: (r) => r.all_layers_peak_rss_mb + r.all_layers_runtime_peak_rss_mb,
  };
  return Object.fromEntries(Object.entries(costs).map(([name, cost]) => [name, Number(fittedExponent(ns, rows.map(cost)).toFixed(2))]));
}

function slopeRow(geometry: string, rows: LengthReport[]): string {
  const k = slopes(rows);
  if (!k) return '';
  return `| ${geometry}: cost ∝ n^k, fitted over ${first(rows).tokens}…${last(rows).tokens} | | k = ${k.explain} | k = ${k.forward} | | k = ${k.first_layer} | k = ${k.all_layers} | | | k = ${k.states} | k = ${k.layer} | k = ${k.peak_rss} | k = ${k.all_layers_peak_rss} |`;
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
