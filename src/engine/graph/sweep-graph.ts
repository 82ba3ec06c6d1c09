import type { Checkpoint } from '../checkpoint';
import type { TermName } from '../types';
import { activation } from './activation';
import type { TermEdit } from './attention-builder';
import { EncoderBuilder } from './deberta-graph';
import { InputName, LayerInput, type LayerInputName, layerWeights, positionFeeds } from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * The head-ranking sweep's graph from layer `start` on: V variants of the rerun at once, each with its own keep
 * masks for layer `start` (a variant removes one head's term; later layers run untouched). Inputs: `hidden` (layer
 * start's input state [n, D]), `rel`, the pick and skew inputs and `seq_len`, per term `keep_<t>` [V, H], `ablate_mean`
 * [1] and `positions` [k]; output `rows` [V·k, D]: each variant's last hidden state at those positions (all the
 * head needs: a masked-LM head one position, a classifier [CLS] or one token, a QA head the span's start and end). The variants are a batch: their heads are stacked (V·H on the head axis of the attention,
 * V·n rows elsewhere), so every matrix product serves all of them — one runtime call instead of V.
 * Only for DeBERTa v2/v3 without the conv block in the swept layers (the caller checks `sweepGraphFits`).
 */
export const SWEEP_GRAPH_VERSION = 'deberta-lens-sweep-2';
export const SweepInput = {
  keep: (t: TermName) => `keep_${t}`,
  mean: 'ablate_mean',
  positions: 'positions',
} as const;
export const SWEEP_ROWS = 'rows';

/** Whether the batched graph covers this model from `start` on (relative v2/v3 attention, no conv block). */
export function sweepGraphFits(ck: Checkpoint, start: number): boolean {
  const s = ck.spec;
  return (
    s.modelType === 'deberta-v2' &&
    s.architecture !== 'bert' &&
    s.relativeAttention &&
    s.posAttType.length > 0 &&
    !(start === 0 && s.convKernelSize > 0)
  );
}

export function buildSweepGraph(ck: Checkpoint, start: number): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    H = s.numHeads,
    d = s.headDim,
    A = s.allHeadSize;
  const enc = new EncoderBuilder(g, ck, H);
  const att = enc.att;
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  const rel = g.input(LayerInput.rel, OnnxType.FLOAT, ['u', D]);
  const kinds = (['c2c', 'c2p', 'p2c'] as const).filter((t) => t === 'c2c' || att.flags[t]);
  const keepIn = Object.fromEntries(kinds.map((t) => [t, g.input(SweepInput.keep(t), OnnxType.FLOAT, ['v', H])])) as Partial<
    Record<TermName, string>
  >;
  const mean = g.input(SweepInput.mean, OnnxType.FLOAT, [1]);
  const positions = g.input(SweepInput.positions, OnnxType.INT64, ['k']);
  // seq_len is declared by the attention builder (relative models): look it up by name.
  const nVec = InputName.n;
  const c = (xs: number[]) => g.constInt64(xs);
  const V = g.node('Slice', [g.node('Shape', [keepIn.c2c!]), c([0]), c([1]), c([0])]); // [1]
  const shape = (...parts: string[]) => g.node('Concat', parts, { axis: 0 });
  // [n, D] → [V·n, D]: every variant starts from the same state.
  let x = g.node('Reshape', [g.node('Expand', [hidden, shape(V, c([1, 1]))]), c([-1, D])]);
  /** [V·n, A] → [V·H, n, d]: variants' heads stacked. */
  const toBatchHeads = (y: string) =>
    g.node('Reshape', [
      g.node('Transpose', [g.node('Reshape', [y, shape(V, nVec, c([H, d]))])], { perm: [0, 2, 1, 3] }),
      shape(c([-1]), nVec, c([d])),
    ]);
  const tileRepeats = shape(V, c([1, 1]));
  const tile = (y: string) => g.node('Tile', [y, tileRepeats]);
  const one = g.constFloat([1], []),
    lastAxis = c([-1]);
  for (let l = start; l < s.numLayers; l++) {
    const p = `encoder.layer.${l}`;
    const w = layerWeights(s, l);
    const W = (name: LayerInputName) => enc.W(w[name]!.name, w[name]!.shape);
    const q = toBatchHeads(att.linear(x, W(LayerInput.wq), W(LayerInput.bq)));
    const k = toBatchHeads(att.linear(x, W(LayerInput.wk), W(LayerInput.bk)));
    const v = toBatchHeads(
      att.linear(x, enc.W(`${p}.attention.self.value_proj.weight`, [A, D]), enc.W(`${p}.attention.self.value_proj.bias`, [A])),
    );
    const { pkW, pkB, pqW, pqB } = positionFeeds(s);
    const bias = (name: LayerInputName) => (w[name] ? W(name) : undefined);
    const pk = att.flags.c2p ? att.linear(rel, W(pkW), bias(pkB)) : undefined;
    const pq = att.flags.p2c ? att.linear(rel, W(pqW), bias(pqB)) : undefined;
    let edit: TermEdit | undefined;
    if (l === start) {
      const weights = new Map(
        kinds.map((t) => {
          const keep = g.node('Reshape', [keepIn[t]!, c([-1, 1, 1])]); // [V·H, 1, 1]
          return [t, { keep, toMean: g.node('Mul', [g.node('Sub', [one, keep]), mean]) }] as const;
        }),
      );
      edit = (kind, term) => {
        const wt = weights.get(kind)!;
        const rowMean = g.node('ReduceMean', [term, lastAxis], { keepdims: 1 });
        return g.node('Add', [g.node('Mul', [term, wt.keep]), g.node('Mul', [rowMean, wt.toMean])]);
      };
    }
    const { probs } = att.terms(q, k, pk, pq, undefined, edit, tile);
    const heads = g.node('MatMul', [probs, v]); // [V·H, n, d]
    const ctx = g.node('Reshape', [
      g.node('Transpose', [g.node('Reshape', [heads, shape(V, c([H]), nVec, c([d]))])], { perm: [0, 2, 1, 3] }),
      c([-1, A]),
    ]);
    const linear = (y: string, prefix: string, out: number, inp: number) =>
      att.linear(y, enc.W(`${prefix}.weight`, [out, inp]), enc.W(`${prefix}.bias`, [out]));
    const attOut = enc.layerNorm(g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), x]), `${p}.attention.output.LayerNorm`);
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    x = enc.layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
  }
  // [V·n, D] → [V, n, D] → [V, k, D]: the followed positions' rows of each variant, variant-major.
  const rows = g.node('Reshape', [g.node('Gather', [g.node('Reshape', [x, shape(V, nVec, c([D]))]), positions], { axis: 1 }), c([-1, D])]);
  g.output(rows, SWEEP_ROWS, OnnxType.FLOAT, ['r', D]);
  return g;
}
