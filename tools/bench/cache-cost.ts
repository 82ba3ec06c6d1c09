// What it costs to make sure a cached graph is built from the bytes on disk, on a random-weight v3-base
// checkpoint (about 740 MB of float32): each step runs in a new process, as a CLI run or a restarted extension
// host would. Prints one JSON object.
//   node out/tools/bench/cache-cost.js [--geometry v3-base] [--dir DIR (reused if present)]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { at } from '../../src/shared/checked';
import { hashStoreOf } from '../../src/engine/cache/cache-layout';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { ensureGraph } from '../../src/engine/graph/graph-cache';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

interface Step {
  load_ms: number;
  graph_ms: number;
  graph_cached: boolean;
}

/** In the child: load (hash or recall) and find or build the graph, timed separately. */
async function child(dir: string, cacheDir: string): Promise<void> {
  const t0 = performance.now();
  const ck = await loadCheckpoint(dir, { hashStore: hashStoreOf(cacheDir) });
  const t1 = performance.now();
  const g = ensureGraph(ck, cacheDir);
  const t2 = performance.now();
  g.release();
  const step: Step = { load_ms: Math.round(t1 - t0), graph_ms: Math.round(t2 - t1), graph_cached: !g.built };
  process.stdout.write(JSON.stringify(step));
}

function run(dir: string, cacheDir: string): Step {
  const r = spawnSync(process.execPath, [__filename, '--child', dir, cacheDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Step;
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--child') return child(at(argv, 1, 'argument'), at(argv, 2, 'argument'));
  const flag = (name: string, dflt: string) => {
    const k = argv.indexOf(`--${name}`);
    return (k >= 0 ? argv[k + 1] : undefined) ?? dflt;
  };
  const name = flag('geometry', 'v3-base');
  const geometry = V3_GEOMETRIES[name];
  if (!geometry) throw new Error(`unknown geometry ${name}: one of ${Object.keys(V3_GEOMETRIES).join(', ')}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-cache-cost-'));
  const dir = flag('dir', path.join(root, 'model'));
  const cacheDir = path.join(root, 'cache');
  try {
    if (!fs.existsSync(path.join(dir, 'model.safetensors'))) writeV3Checkpoint(dir, geometry);
    const weights = path.join(dir, 'model.safetensors');
    const old = new Date(Date.now() - 60_000); // settled: hashes of files this recent are not remembered
    fs.utimesSync(weights, old, old);
    fs.utimesSync(path.join(dir, 'config.json'), old, old);
    const cold = run(dir, cacheDir); // hashes every byte and builds the graph
    const warm = [run(dir, cacheDir), run(dir, cacheDir), run(dir, cacheDir)];
    fs.chmodSync(weights, 0o640); // only the ctime moves: the bytes must be read again to be trusted
    const ctime = run(dir, cacheDir);
    const after = run(dir, cacheDir);
    const median = (xs: number[]) =>
      at(
        [...xs].sort((a, b) => a - b),
        Math.floor(xs.length / 2),
        'run',
      );
    const report = {
      geometry: geometry.name,
      weights_mb: Math.round(fs.statSync(weights).size / 1e6),
      cold: { ...cold, note: 'new file: sha256 of every byte + graph build' },
      warm_load_ms_median: median(warm.map((s) => s.load_ms)),
      warm_graph_check_ms_median: median(warm.map((s) => s.graph_ms)),
      warm_all_cached: warm.every((s) => s.graph_cached),
      after_ctime_change: {
        ...ctime,
        note: 'chmod moved the ctime: bytes re-hashed; the graph entry (same inode) stays valid through the new hash record',
      },
      after_that: after,
      cpus: os.cpus().length,
      loadavg_1m: os.loadavg()[0],
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.message : e}\n`);
  process.exit(1);
});
