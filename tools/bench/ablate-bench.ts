// `npm run bench:ablate`: one intervention (c2p of head 0 in layer l) against a plain forward of the same tokens.
// The rerun runs layers l…L−1 only, so its target is the forward time × (layers rerun / all layers) + 20%; the
// whole intervention (forward that keeps layer l's input, rerun, both head runs) is reported beside it.
import { forwardOnly } from '../../src/engine';
import { benchMain, flag, median, peakRssMb, round } from './bench-model';

const n = Number(flag('length', '128'));
const runs = Number(flag('runs', '10'));

benchMain('ablate', runs, async (bench) => {
  const { model } = bench;
  const L = model.info.layers;
  const starts = flag('layers', `0,${Math.floor(L / 2)},${L - 1}`)
    .split(',')
    .map(Number);
  const rows = [];
  const ids = await bench.idsOf(n);
  for (const l of starts) {
    const ablate = `${l}.0:c2p`;
    const forward = { wall: [] as number[], run: [] as number[] };
    const rerun: number[] = [],
      whole: number[] = [];
    for (let r = -2; r < runs; r++) {
      // Interleaved, warm-up runs dropped, so both see the same machine load.
      let t0 = performance.now();
      const f = await forwardOnly(model, ids);
      const fw = performance.now() - t0;
      t0 = performance.now();
      const a = await model.ablate({ ids, ablate });
      const aw = performance.now() - t0;
      if (r < 0) continue;
      forward.wall.push(fw);
      forward.run.push(f.ms);
      rerun.push(a.timings.rerun_ms);
      whole.push(aw);
    }
    const fraction = (L - l) / L;
    const target = median(forward.run) * fraction * 1.2;
    rows.push({
      ablate,
      tokens: n,
      layers_rerun: L - l,
      forward_run_ms_median: round(median(forward.run)),
      rerun_ms_median: round(median(rerun)),
      target_ms: round(target),
      rerun_over_target: round(median(rerun) / target, 3),
      rerun_over_forward_fraction: round(median(rerun) / (median(forward.run) * fraction), 3),
      forward_wall_ms_median: round(median(forward.wall)),
      intervention_wall_ms_median: round(median(whole)),
    });
  }
  rows.push({
    encoder_peak_rss_mb: peakRssMb(model.session.pid),
    head_peak_rss_mb: model.heads.pids.map(peakRssMb),
    rerun_peak_rss_mb: model.tails.pids.map(peakRssMb),
  });
  return rows;
});
