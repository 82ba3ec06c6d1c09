// First-layer time, this tree against another compiled tree, interleaved in one process so that both see the same
// machine load (the machines these figures come from are shared and noisy). Each round explains the same ids with
// both engines and asks each fresh result for layer 0 (its c2c, c2p, p2c and probs for all heads), the order
// alternating between rounds. Prints one JSON object.
//
//   git worktree add /tmp/lens-old main && cd /tmp/lens-old && ln -s <this repo>/node_modules && npm run compile
//   npm run compile && node out/tools/bench/first-layer-ab.js --old /tmp/lens-old --geometry v3-base --tokens 512
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as engine from '../../src/engine';
import { flag, median, round } from './bench-model';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

type Engine = typeof engine;

interface Side {
  name: string;
  model: engine.OpenModel;
  first: number[];
  /** CPU time of the same requests, the caller's and the runtime process's together: what load does not inflate. */
  cpu: number[];
  explain: number[];
  /** The very first layer-0 request of the session (weights sent; position projections computed, where kept). */
  firstUse?: number;
}

/** CPU time a process has run, in ms, summed over its threads (Linux schedstat, ns resolution; 0 elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    return tasks.reduce((sum, t) => sum + Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]) / 1e6, 0);
  } catch {
    return 0;
  }
}

async function layerZero(side: Side, ids: number[], keep: boolean): Promise<void> {
  let t0 = performance.now();
  const res = await side.model.explain({ ids });
  const ex = performance.now() - t0;
  const [host, runtime] = [process.cpuUsage(), cpuMs(side.model.session.pid)];
  t0 = performance.now();
  await res.load(0);
  const ms = performance.now() - t0;
  const cpu =
    (process.cpuUsage().user - host.user + process.cpuUsage().system - host.system) / 1000 + cpuMs(side.model.session.pid) - runtime;
  res.release();
  side.firstUse ??= ms;
  if (!keep) return;
  side.explain.push(ex);
  side.first.push(ms);
  side.cpu.push(cpu);
}

async function main(): Promise<void> {
  const oldRoot = path.resolve(flag('old', ''));
  const oldEngine = path.join(oldRoot, 'out', 'src', 'engine', 'index.js');
  if (!fs.existsSync(oldEngine)) throw new Error(`--old: no compiled engine at ${oldEngine} (run npm run compile in that tree)`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the other tree's engine, loaded at run time
  const old = require(oldEngine) as Engine;
  const geometry = flag('geometry', 'v3-base');
  const g = V3_GEOMETRIES[geometry];
  if (!g) throw new Error(`unknown geometry ${geometry}: use ${Object.keys(V3_GEOMETRIES).join(', ')}`);
  const n = Number(flag('tokens', '512'));
  const runs = Number(flag('runs', '10'));
  const threads = Number(flag('threads', String(engine.defaultThreads())));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-ab-'));
  const sides: Side[] = [];
  try {
    const dir = path.join(root, geometry);
    writeV3Checkpoint(dir, g);
    for (const [name, e] of [
      ['old', old],
      ['new', engine],
    ] as const) {
      const model = await e.openModel(dir, { cacheDir: path.join(root, `cache-${name}`), threads, executionProvider: 'cpu' });
      sides.push({ name, model, first: [], cpu: [], explain: [] });
    }
    let x = 7;
    const ids = [1, ...Array.from({ length: n - 2 }, () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % 120000) + 5), 2];
    for (const side of sides) await layerZero(side, ids, false);
    const load = [os.loadavg()[0] ?? 0];
    for (let r = 0; r < runs; r++) {
      for (const side of r % 2 ? [...sides].reverse() : sides) await layerZero(side, ids, true);
    }
    load.push(os.loadavg()[0] ?? 0);
    const [a, b] = sides;
    if (!a || !b) throw new Error('an A/B run needs both sides');
    const out = {
      date: new Date().toISOString(),
      geometry,
      tokens: n,
      threads,
      runs,
      old: oldRoot,
      load_1min: load.map((v) => round(v)),
      results: sides.map((s) => ({
        tree: s.name,
        first_layer_ms_median: round(median(s.first)),
        first_layer_ms_min: round(Math.min(...s.first)),
        first_layer_cpu_ms_median: round(median(s.cpu)),
        first_use_ms: round(s.firstUse ?? 0),
        explain_ms_median: round(median(s.explain)),
        first_layer_ms: s.first.map((v) => round(v, 1)),
      })),
      new_over_old_median: round(median(b.first) / median(a.first), 3),
      new_over_old_cpu_median: round(median(b.cpu) / median(a.cpu), 3),
      // Per round: the two measurements were taken back to back, so their ratio is the least noisy figure.
      new_over_old_per_round_median: round(median(a.first.map((v, k) => b.first[k]! / v)), 3),
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await Promise.all(sides.map((s) => s.model.dispose()));
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`first-layer A/B failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
