// What the head benchmarks (bench:predict, bench:ablate) share: flags, medians, the model under test (the bundled
// one, or a random checkpoint of a real geometry with both heads), ids of n tokens with a [MASK] in the middle.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultThreads, openModel, type OpenModel } from '../../src/engine';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');

export function flag(name: string, fallback: string): string {
  const k = process.argv.indexOf(`--${name}`);
  return (k > 0 && process.argv[k + 1]) || fallback;
}
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Peak resident memory of a process in MB (Linux /proc; 0 elsewhere). */
export function peakRssMb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 0) : 0;
  } catch {
    return 0;
  }
}

export interface BenchModel {
  model: OpenModel;
  /** The model's name or the geometry's. */
  name: string;
  threads: number;
  /** [CLS] …sample text… [SEP] of n tokens with a [MASK] at n/2. */
  idsOf(n: number): Promise<number[]>;
  close(): Promise<void>;
}

/** --geometry v3-base: a random checkpoint of that geometry with both heads (and the bundled tokenizer's ids). */
export async function openBenchModel(what: string): Promise<BenchModel> {
  const threads = Number(flag('threads', String(defaultThreads())));
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), `deberta-lens-${what}-bench-`));
  const geometry = flag('geometry', '');
  let modelDir = flag('model', 'default');
  if (geometry) {
    const g = V3_GEOMETRIES[geometry];
    if (!g) throw new Error(`unknown geometry ${geometry}: use ${Object.keys(V3_GEOMETRIES).join(', ')}`);
    modelDir = path.join(cacheDir, geometry);
    writeV3Checkpoint(modelDir, g, true);
    for (const f of ['spm.model', 'tokenizer_config.json', 'special_tokens_map.json'])
      fs.copyFileSync(path.join(REPO, 'models', 'default', f), path.join(modelDir, f));
  }
  const model = await openModel(modelDir, { cacheDir, threads, executionProvider: 'cpu' });
  const tok = model.tokenizer!;
  const text = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
  const body = (await tok.encode(text.repeat(20))).map((t) => t.id);
  return {
    model,
    name: geometry || model.info.name,
    threads,
    idsOf: async (n) => {
      const ids = [tok.special.cls, ...body.slice(0, n - 2), tok.special.sep];
      ids[Math.floor(n / 2)] = tok.special.mask;
      return ids;
    },
    close: async () => {
      try {
        await model.dispose();
      } finally {
        fs.rmSync(cacheDir, { recursive: true, force: true });
      }
    },
  };
}

/** Opens the model, runs `body` (its rows), closes, and prints one JSON object with the machine's state. */
export function benchMain(what: string, runs: number, body: (bench: BenchModel) => Promise<object[]>): void {
  const main = async () => {
    const bench = await openBenchModel(what);
    let rows: object[];
    try {
      rows = await body(bench);
    } finally {
      await bench.close();
    }
    const out = {
      date: new Date().toISOString(),
      model: bench.name,
      cpu: os.cpus()[0]?.model,
      cores: os.cpus().length,
      threads: bench.threads,
      runs,
      load: os.loadavg(),
      results: rows,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  };
  main().catch((e) => {
    process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  });
}
