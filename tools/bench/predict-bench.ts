// `npm run bench:predict`: fill-mask (encoder + MLM head, one [MASK], one message to the encoder's process)
// against a plain forward of the same tokens, end to end as the caller sees them and as onnxruntime runs them; and
// what the panel does, an explain followed by fill-mask on its kept hidden state (the heads only), against the
// explain alone. Prints one JSON object.
import { forwardOnly } from '../../src/engine';
import { benchMain, flag, median, peakRssMb, round } from './bench-model';

const lengths = flag('lengths', '128').split(',').map(Number);
const runs = Number(flag('runs', '30'));

benchMain('predict', runs, async (bench) => {
  const { model } = bench;
  const rows = [];
  for (const n of lengths) {
    const ids = await bench.idsOf(n);
    const forward = { wall: [] as number[], run: [] as number[] };
    const fill = { wall: [] as number[], run: [] as number[], head: [] as number[] };
    const panel = { explain: [] as number[], both: [] as number[], head: [] as number[] };
    for (let r = -3; r < runs; r++) {
      // Interleaved, warm-up runs dropped, so both see the same machine load.
      let t0 = performance.now();
      const f = await forwardOnly(model, ids);
      const fw = performance.now() - t0;
      t0 = performance.now();
      const p = await model.predict({ ids });
      const pw = performance.now() - t0;
      t0 = performance.now();
      const result = await model.explain({ ids });
      const ew = performance.now() - t0;
      const pe = await model.predictExplained(result, {});
      const bw = performance.now() - t0;
      result.release();
      if (!pe.timings.forward_reused) throw new Error('the explain kept no last hidden state: fill-mask ran the encoder again');
      if (r < 0) continue;
      panel.explain.push(ew);
      panel.both.push(bw);
      panel.head.push(pe.timings.head_ms);
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
      explain_ms_median: round(median(panel.explain)),
      explain_fill_mask_ms_median: round(median(panel.both)),
      explain_fill_mask_ratio: round(median(panel.both) / median(panel.explain), 3),
      explain_head_run_ms_median: round(median(panel.head)),
      encoder_peak_rss_mb: peakRssMb(model.session.pid),
    });
  }
  return rows;
});
