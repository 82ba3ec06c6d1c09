// `npm run bench:sweep`: the head ranking (every head's c2p, p2c and c2c removed alone, each rerun from its layer)
// at one [MASK] of n tokens. Targets: bundled model at 64 tokens ≤ 3 s; v3-base geometry at 128 tokens ≤ 60 s.
// Also the time from an abort to the sweep's rejection (cancel must take effect within 200 ms).
import { benchMain, flag, round } from './bench-model';

const n = Number(flag('length', '64'));
const runs = Number(flag('runs', '1'));

benchMain('sweep', runs, async (bench) => {
  const { model } = bench;
  const ids = await bench.idsOf(n);
  const target = Number(flag('target-s', bench.name === 'default' ? '3' : '60'));
  const rows: object[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    let firstCellMs = 0;
    const result = await model.sweep({
      ids,
      terms: ['all'],
      onProgress: ({ done }) => void (done === 1 && (firstCellMs = performance.now() - t0)),
    });
    const wall = (performance.now() - t0) / 1000;
    rows.push({
      tokens: n,
      terms: result.terms,
      cells: result.timings.cells,
      wall_s: round(wall, 3),
      target_s: target,
      wall_over_target: round(wall / target, 3),
      forward_ms: round(result.timings.forward_ms),
      rerun_ms_total: round(result.timings.rerun_ms),
      head_ms_total: round(result.timings.head_ms),
      per_cell_ms: round((wall * 1000) / result.timings.cells),
      first_cell_ms: round(firstCellMs),
    });
  }
  // Cancel: abort once a tenth of the cells are done; time until the sweep rejects.
  const controller = new AbortController();
  let abortedAt = 0;
  const cancelled = model.sweep(
    {
      ids,
      terms: ['all'],
      onProgress: ({ done, total }) => {
        if (!abortedAt && done >= total / 10) {
          abortedAt = performance.now();
          // Abort while the next cell's rerun is in flight, as a user's Cancel does.
          setTimeout(() => controller.abort(), 0);
        }
      },
    },
    controller.signal,
  );
  const outcome = await cancelled.then(
    () => 'finished',
    (e: Error) => e.message,
  );
  rows.push({ cancel: outcome, cancel_ms: round(performance.now() - abortedAt), cancel_target_ms: 200 });
  return rows;
});
