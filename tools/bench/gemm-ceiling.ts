// What batching can gain on this CPU at most: a rerun's cost is its matrix products, and stacking V variants only
// makes each product taller ([M, D] · [D, F] with M = V·n rows). The runtime's MatMul throughput at the rows of one
// variant against the rows of a batch bounds the batched speed-up of a sweep (the work itself does not shrink).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GraphBuilder } from '../../src/engine/graph/graph-builder';
import { encodeModel, OnnxType } from '../../src/engine/graph/onnx-proto';
import { RuntimeSession } from '../../src/engine/runtime/session';

/** GFLOPS of [rows, k] · [k, f] (the weights a constant input, as in the graphs), best of `runs`, per row count. */
export async function gemmGflops(rowsList: number[], k: number, f: number, threads: number, dir: string): Promise<Record<number, number>> {
  const g = new GraphBuilder();
  const a = g.input('a', OnnxType.FLOAT, ['m', k]);
  const b = g.input('b', OnnxType.FLOAT, [k, f]);
  g.output(g.node('MatMul', [a, b]), 'c', OnnxType.FLOAT, ['m', f]);
  const file = path.join(dir, 'gemm-ceiling.onnx');
  fs.writeFileSync(file, encodeModel(g.build('gemm'), 20, 'deberta-lens-bench'));
  const session = new RuntimeSession({ forward: file }, ['cpu'], threads);
  const out: Record<number, number> = {};
  try {
    const w = new Float32Array(k * f).map((_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
    for (const rows of rowsList) {
      const x = new Float32Array(rows * k).map((_, i) => ((i * 104729) % 1000) / 1000 - 0.5);
      // Enough calls that each row count does about the same work: small products are timed many times.
      const calls = Math.max(3, Math.round(40 * (2048 / rows) ** 0.5));
      let best = Infinity;
      for (let r = 0; r < calls; r++) {
        const { outputs, ms } = await session.run(
          'forward',
          { a: { type: 'float32', data: x, dims: [rows, k] }, b: { type: 'float32', data: w, dims: [k, f] } },
          ['c'],
        );
        outputs.release();
        if (r > 0) best = Math.min(best, ms);
      }
      out[rows] = (2 * rows * k * f) / (best * 1e6);
    }
    return out;
  } finally {
    await session.terminate();
  }
}
