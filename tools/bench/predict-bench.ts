// `npm run bench:predict`: fill-mask (encoder + MLM head, one [MASK]) against a plain forward of the same
// tokens, end to end as the caller sees them and as onnxruntime runs them. Prints one JSON object.
import * as os from 'node:os';
import { forwardOnly } from '../../src/engine';
import { flag, median, openBenchModel, peakRssMb, round } from './bench-model';

async function main() {
  const lengths = flag('lengths', '128').split(',').map(Number);
  const runs = Number(flag('runs', '30'));
  const bench = await openBenchModel('predict');
  const { model, threads } = bench;
  const rows = [];
  try {
    for (const n of lengths) {
      const ids = await bench.idsOf(n);
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
    await bench.close();
  }
  const out = { date: new Date().toISOString(), model: bench.name, cpu: os.cpus()[0]?.model, cores: os.cpus().length, threads, runs, load: os.loadavg(), results: rows };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(1);
});
