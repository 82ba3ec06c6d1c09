import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import type { Heads } from '../checkpoint/heads';
import { activation } from './activation';
import { emdPasses } from './emd-graph';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * The prediction heads as their own small ONNX graph over the encoder's last hidden state `[n, D]` (see ../heads.ts
 * for the arithmetic). The masked-LM head runs only at the rows asked for and reduces each row inside the graph:
 * the top k logits and ids, the log-sum-exp (so p = exp(logit − lse)) and the logit and rank of one target id per
 * row. Only k + 3 numbers a row leave the runtime, never the full [m, vocab] logits (128k × 4 bytes a row for v3).
 */
export const HEAD_GRAPH_VERSION = 'deberta-lens-heads-1';
/** The compare variant (for interventions): also takes a reference state and gives KL(reference ‖ this) per row. */
export const HEAD_COMPARE_GRAPH_VERSION = 'deberta-lens-heads-compare-1';
/** The EMD variant: `hidden` is the state entering the last layer; the Enhanced Mask Decoder's two passes of that
 *  layer run first (fed also the forward graph's relative rows and the pick and skew inputs), the heads read pass 2. */
export const HEAD_EMD_GRAPH_VERSION = 'deberta-lens-heads-emd-1';

export const HeadInput = {
  hidden: 'hidden',
  /** Compare variant: the reference run's state `[n, D]` (before an intervention). */
  refHidden: 'ref_hidden',
  positions: 'mlm_positions',
  targets: 'mlm_targets',
  k: 'top_k',
} as const;

export const HeadOutput = {
  topLogits: 'mlm_top_logits', // [m, k] float32, descending
  topIds: 'mlm_top_ids', // [m, k] int32
  logSumExp: 'mlm_logsumexp', // [m]
  targetLogits: 'mlm_target_logits', // [m]
  targetRanks: 'mlm_target_ranks', // [m] int32: how many ids score strictly higher than the target
  kl: 'mlm_kl', // [m], compare variant: KL(p_ref ‖ p) in nats over the whole vocabulary
  rtdLogits: 'rtd_logits', // [n]
} as const;

export function buildHeadGraph(ck: Checkpoint, heads: Heads, compare = false, emd = false, headGroup?: number): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const W = (name: string, shape: number[]) => g.weight(requireWeight(ck, name, shape));
  const D = s.hiddenSize,
    V = s.vocabSize;
  const input = g.input(HeadInput.hidden, OnnxType.FLOAT, ['n', D]);
  const hidden = emd ? emdPasses(g, ck, input, false, headGroup).passes[1] : input;
  const layerNorm = (x: string, prefix: string, width: number) =>
    g.node('LayerNormalization', [x, W(`${prefix}.weight`, [width]), W(`${prefix}.bias`, [width])], {
      axis: -1,
      epsilon: { float: s.layerNormEps },
    });
  const dense = (x: string, prefix: string, out: number) =>
    g.node('Gemm', [x, W(`${prefix}.weight`, [out, D]), W(`${prefix}.bias`, [out])], { transB: 1 });

  const mlm = heads.mlm;
  if (mlm) {
    const E = mlm.width;
    const positions = g.input(HeadInput.positions, OnnxType.INT64, ['m']);
    const targets = g.input(HeadInput.targets, OnnxType.INT64, ['m']);
    const k = g.input(HeadInput.k, OnnxType.INT64, [1]);
    const logitsOf = (state: string) => {
      const rows = g.node('Gather', [state, positions], { axis: 0 }); // [m, D]
      const t = layerNorm(activation(g, dense(rows, mlm.dense, E), s.hiddenAct), mlm.layerNorm, E);
      return g.node('Gemm', [t, W(mlm.decoder, [V, E]), W(mlm.bias, [V])], { transB: 1 }); // [m, V]
    };
    const logits = logitsOf(hidden);
    const [values, indices] = g.nodeN('TopK', [logits, k], 2, { axis: -1, largest: 1, sorted: 1 });
    g.output(values, HeadOutput.topLogits, OnnxType.FLOAT, ['m', 'k']);
    g.output(g.node('Cast', [indices], { to: OnnxType.INT32 }), HeadOutput.topIds, OnnxType.INT32, ['m', 'k']);
    const lastAxis = g.constInt64([-1]);
    g.output(g.node('ReduceLogSumExp', [logits, lastAxis], { keepdims: 0 }), HeadOutput.logSumExp, OnnxType.FLOAT, ['m']);
    const target = g.node('GatherElements', [logits, g.node('Unsqueeze', [targets, lastAxis])], { axis: 1 }); // [m, 1]
    g.output(g.node('Squeeze', [target, lastAxis]), HeadOutput.targetLogits, OnnxType.FLOAT, ['m']);
    const above = g.node('Cast', [g.node('Greater', [logits, target])], { to: OnnxType.INT32 });
    g.output(g.node('ReduceSum', [above, lastAxis], { keepdims: 0 }), HeadOutput.targetRanks, OnnxType.INT32, ['m']);
    if (compare) {
      const logSoftmax = (x: string) => g.node('LogSoftmax', [x], { axis: -1 });
      const ref = logSoftmax(logitsOf(g.input(HeadInput.refHidden, OnnxType.FLOAT, ['n', D])));
      const diff = g.node('Sub', [ref, logSoftmax(logits)]);
      g.output(
        g.node('ReduceSum', [g.node('Mul', [g.node('Exp', [ref]), diff]), lastAxis], { keepdims: 0 }),
        HeadOutput.kl,
        OnnxType.FLOAT,
        ['m'],
      );
    }
  }
  const rtd = heads.rtd;
  if (rtd) {
    const cls = g.node('Gather', [hidden, g.constInt64([0])], { axis: 0 }); // [1, D], broadcast over the rows
    const x = activation(g, dense(layerNorm(g.node('Add', [hidden, cls]), rtd.layerNorm, D), rtd.dense, D), s.hiddenAct);
    const logit = g.node('Gemm', [x, W(`${rtd.classifier}.weight`, [1, D]), W(`${rtd.classifier}.bias`, [1])], { transB: 1 }); // [n, 1]
    g.output(g.node('Squeeze', [logit, g.constInt64([1])]), HeadOutput.rtdLogits, OnnxType.FLOAT, ['n']);
  }
  return g;
}
