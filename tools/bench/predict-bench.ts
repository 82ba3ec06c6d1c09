// `npm run bench:predict`: fill-mask (encoder + MLM head, one [MASK]) against a plain forward of the same
// tokens, end to end as the caller sees them and as onnxruntime runs them. Prints one JSON object.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { forwardOnly, openModel } from '../../src/engine';
import { V3_GEOMETRIES, writeV3Checkpoint } from './geometries';

const REPO = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');

function flag(name: string, fallback: string): string {
  const k = process.argv.indexOf(`--${name}`);
  return k > 0 && process.argv[k + 1] ? process.argv[k + 1] : fallback;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Peak resident memory of a process in MB (Linux /proc; 0 elsewhere). */
function peakRssMb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 0) : 0;
  } catch {
    return 0;
  }
}

async function main() {
  const lengths = flag('lengths', '128').split(',').map(Number);
  const runs = Number(flag('runs', '30'));
  const threads = Number(flag('threads', String(os.availableParallelism?.() ?? os.cpus().length)));
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'deberta-lens-predict-bench-'));
  // --geometry v3-base: a random checkpoint of that geometry with both heads (and the bundled tokenizer's ids).
  const geometry = flag('geometry', '');
  let modelDir = flag('model', 'default');
  if (geometry) {
    const g = V3_GEOMETRIES[geometry];
    if (!g) throw new Error(`unknown geometry ${geometry}: use ${Object.keys(V3_GEOMETRIES).join(', ')}`);
    modelDir = path.join(cacheDir, geometry);
    writeV3Checkpoint(modelDir, g, true);
    for (const f of ['spm.model', 'tokenizer_config.json', 'special_tokens_map.json']) fs.copyFileSync(path.join(REPO, 'models', 'default', f), path.join(modelDir, f));
  }
  const model = await openModel(modelDir, { cacheDir, threads, executionProvider: 'cpu' });
  const rows = [];
  try {
    const mask = model.tokenizer!.special.mask;
    const text = fs.readFileSync(path.join(REPO, 'samples', 'sample.md'), 'utf8').replace(/\s+/g, ' ');
    const body = (await model.tokenizer!.encode(text.repeat(20))).map((t) => t.id);
    for (const n of lengths) {
      const ids = [model.tokenizer!.special.cls, ...body.slice(0, n - 2), model.tokenizer!.special.sep];
      ids[Math.floor(n / 2)] = mask;
      const forward = { wall: [] as number[], run: [] as number[] };
      const fill = { wall: [] as number[], run: [] as number[], head: [] as number[] };
      for (let r = -3; r < runs; r++) {
        // Interleaved, warm-up runs dropped, so both see the same machine load.
        let t0 = performance.now();
        const f = await forwardOnly(model, ids);
        const fw = performance.now() - t0;
        t0 = performance.now();
        const p = await model.predict({ ids });
        const pw = performance.now() - t0;
        if (r < 0) continue;
        forward.wall.push(fw);
        forward.run.push(f.ms);
        fill.wall.push(pw);
        fill.run.push(p.timings.forward_ms + p.timings.head_ms);
        fill.head.push(p.timings.head_ms);
      }
      rows.push({
        tokens: n,
        forward_ms_median: round(median(forward.wall)),
        fill_mask_ms_median: round(median(fill.wall)),
        ratio: round(median(fill.wall) / median(forward.wall), 3),
        forward_run_ms_median: round(median(forward.run)),
        fill_mask_run_ms_median: round(median(fill.run)),
        head_run_ms_median: round(median(fill.head)),
        run_ratio: round(median(fill.run) / median(forward.run), 3),
        encoder_peak_rss_mb: peakRssMb(model.session.pid),
        head_peak_rss_mb: model.heads.pids.map(peakRssMb),
      });
    }
  } finally {
    await model.dispose();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
  const out = { date: new Date().toISOString(), model: geometry || model.info.name, cpu: os.cpus()[0]?.model, cores: os.cpus().length, threads, runs, load: os.loadavg(), results: rows };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
