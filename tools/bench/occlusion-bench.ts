// `npm run bench:occlusion`: token attribution by occlusion ('mask' over every token of n, default 128) on a
// random-weight sequence classifier of a real geometry (default v3-base), batched against one forward pass per
// variant, interleaved in one run. Targets: batched ≤ 20 s and ≥ 1.3× faster than one by one. Prints one JSON object.
//   npm run bench:occlusion -- [--geometry v3-base] [--length 128] [--runs 1] [--threads N]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads, type OcclusionResult, openModel } from '../../src/engine';
import { flag, median, peakRssMb, round } from './bench-model';
import { randomFill, V3_GEOMETRIES, v3Config, writeV3Checkpoint } from './geometries';
import { writeSafetensors } from '../fixtures/write-safetensors';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
const n = Number(flag('length', '128'));
const runs = Number(flag('runs', '1'));
const geometry = flag('geometry', 'v3-base');
const threads = Number(flag('threads', String(defaultThreads())));

/** Tensor names of a safetensors file (its JSON header). */
function tensorNames(file: string): string[] {
  const fd = fs.openSync(file, 'r');
  try {
    const len = Buffer.alloc(8);
    fs.readSync(fd, len, 0, 8, 0);
    const size = Number(len.readBigUInt64LE());
    if (size > 100 * 2 ** 20) throw new Error(`${file}: header of ${size} bytes`);
    const header = Buffer.alloc(size);
    fs.readSync(fd, header, 0, size, 8);
    return Object.keys(JSON.parse(header.toString('utf8')) as object).filter((k) => k !== '__metadata__');
  } finally {
    fs.closeSync(fd);
  }
}

/** The geometry's random encoder with a two-label sequence-classification head (pooler + classifier), as two shards. */
export function writeClassifier(dir: string, geometry: string): void {
  const g = V3_GEOMETRIES[geometry];
  if (!g) throw new Error(`unknown geometry ${geometry}: use ${Object.keys(V3_GEOMETRIES).join(', ')}`);
  writeV3Checkpoint(dir, g, false);
  const D = g.hidden;
  const [encoder, classifier] = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  fs.renameSync(path.join(dir, 'model.safetensors'), path.join(dir, encoder));
  const head = [
    { name: 'pooler.dense.weight', shape: [D, D], fill: randomFill(101) },
    { name: 'pooler.dense.bias', shape: [D], fill: randomFill(102) },
    { name: 'classifier.weight', shape: [2, D], fill: randomFill(103) },
    { name: 'classifier.bias', shape: [2], fill: randomFill(104) },
  ];
  writeSafetensors(path.join(dir, classifier), head, { metadata: { format: 'pt' } });
  const weightMap: Record<string, string> = {};
  for (const name of tensorNames(path.join(dir, encoder))) weightMap[name] = encoder;
  for (const t of head) weightMap[t.name] = classifier;
  fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
  const config = {
    ...v3Config(g),
    architectures: ['DebertaV2ForSequenceClassification'],
    id2label: { 0: 'negative', 1: 'positive' },
    label2id: { negative: 0, positive: 1 },
    pooler_hidden_size: D,
    pooler_hidden_act: 'gelu',
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  for (const f of ['spm.model', 'tokenizer_config.json', 'special_tokens_map.json'])
    fs.copyFileSync(path.join(REPO, 'models', 'default', f), path.join(dir, f));
}

/** Fields of /proc/PID/stat after the command name (utime is [11], stime [12], cutime [13], cstime [14], ppid [1]). */
function statFields(pid: string): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ').map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds of this process and its children, live (the encoder's and the occlusion graph's runtime processes) and
 *  reaped; 0 off Linux. Clock ticks of 1/100 s. */
function cpuSeconds(): number {
  const self = statFields('self');
  let ticks = (self[11] ?? 0) + (self[12] ?? 0) + (self[13] ?? 0) + (self[14] ?? 0);
  const pids = fs.existsSync('/proc') ? fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)) : [];
  for (const pid of pids) {
    const f = statFields(pid);
    if (f[1] === process.pid) ticks += (f[11] ?? 0) + (f[12] ?? 0);
  }
  return ticks / 100;
}

const maxDiff = (a: OcclusionResult, b: OcclusionResult) =>
  a.methods.mask!.scores.reduce<number>((m, s, i) => (s === null ? m : Math.max(m, Math.abs(s - b.methods.mask!.scores[i]!))), 0);

async function main() {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-occlusion-bench-'));
  const dir = path.join(cacheDir, `${geometry}-seqcls`);
  writeClassifier(dir, geometry);
  const model = await openModel(dir, { cacheDir, threads, executionProvider: 'cpu' });
  const rows: object[] = [];
  try {
    const tok = model.tokenizer!;
    const text = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
    const body = (await tok.encode(text.repeat(20))).map((t) => t.id);
    const ids = [tok.special.cls, ...body.slice(0, n - 2), tok.special.sep];
    // Warm-up: builds and caches the occlusion graph and starts its process (a first use's cost, not a run's: the
    // process stays up with the model), warms the encoder.
    const first = await model.occlude({ ids: ids.slice(0, 8), methods: ['mask'] });
    await model.occlude({ ids: ids.slice(0, 8), methods: ['mask'], batch: false });
    const wall = { batched: [] as number[], single: [] as number[] };
    const cpu = { batched: [] as number[], single: [] as number[] };
    // Every process's CPU time: this one and its children (the encoder's and the occlusion graph's runtime
    // processes). Less moved by other work on a shared machine than wall time (both still pay for its cache misses).
    const cpuNow = cpuSeconds;
    for (let r = 0; r < runs; r++) {
      let [t0, c0] = [performance.now(), cpuNow()];
      const batched = await model.occlude({ ids, methods: ['mask'] });
      wall.batched.push((performance.now() - t0) / 1000);
      cpu.batched.push(cpuNow() - c0);
      [t0, c0] = [performance.now(), cpuNow()];
      const single = await model.occlude({ ids, methods: ['mask'], batch: false });
      wall.single.push((performance.now() - t0) / 1000);
      cpu.single.push(cpuNow() - c0);
      rows.push({
        tokens: n,
        variants: batched.timings.variants,
        batched_wall_s: round(at(wall.batched, r), 3),
        batched_forward_ms: round(batched.timings.forward_ms),
        batched_start_ms: round(batched.timings.start_ms),
        batched_runs: batched.timings.runs,
        batch_size: batched.timings.batch_size,
        one_by_one_wall_s: round(at(wall.single, r), 3),
        one_by_one_forward_ms: round(single.timings.forward_ms),
        speedup: round(at(wall.single, r) / at(wall.batched, r), 3),
        batched_cpu_s: round(at(cpu.batched, r), 2),
        one_by_one_cpu_s: round(at(cpu.single, r), 2),
        cpu_ratio: round(at(cpu.single, r) / at(cpu.batched, r), 3),
        load: os.loadavg()[0],
        max_score_diff: maxDiff(batched, single),
      });
    }
    rows.push({
      batched_wall_s_median: round(median(wall.batched), 3),
      one_by_one_wall_s_median: round(median(wall.single), 3),
      speedup_median: round(median(wall.single) / median(wall.batched), 3),
      cpu_ratio_median: round(median(cpu.single) / median(cpu.batched), 3),
      first_use_start_ms: round(first.timings.start_ms),
      target_batched_s: 20,
      target_speedup: 1.3,
      encoder_peak_rss_mb: peakRssMb(model.session.pid),
    });
  } finally {
    await model.dispose();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
  const out = {
    date: new Date().toISOString(),
    model: `${geometry} (random weights, sequence classification)`,
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    threads,
    runs,
    load: os.loadavg(),
    results: rows,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

function at(xs: number[], k: number): number {
  const x = xs[k];
  if (x === undefined) throw new RangeError(`no run ${k}`);
  return x;
}

if (require.main === module)
  main().catch((e) => {
    process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  });
