// The graphs that recompute one layer on demand: the layer graph (a range of heads' terms and softmax from the
// layer's input states) and the positions graph (a layer's projection of the whole relative table, kept by the
// runtime since it does not depend on the text).
import type { ModelSpec } from '../types';
import { AttentionBuilder } from './attention-builder';
import { LayerInput, type LayerInputName, layerOutput, layerWeights, positionFeeds, PositionsInput, termFlags } from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * One layer's attention for a range of heads: inputs `hidden` [n, D], the weight rows of those heads
 * (contentWeightFeeds), their rows of the layer's projected relative table `pos_key`, `pos_query` [h·d, 2S]
 * (buildPositionsGraph), and the picks (rows of the table) and skew inputs; outputs c2c, c2p, p2c, probs as
 * [h, n, n]. The position projections do not depend on the text, so they are computed once per layer and kept.
 */
export function buildLayerGraph(s: ModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    d = s.headDim;
  const att = new AttentionBuilder(g, s);
  const w = layerWeights(s, 0);
  const feed = (name: LayerInputName): string | undefined => {
    const spec = w[name];
    if (!spec) return undefined;
    return g.input(name, OnnxType.FLOAT, spec.shape.length === 1 ? ['hd'] : [spec.rowsPerHead === d ? 'hd' : 'h3d', D]);
  };
  const h = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  let q: string, k: string;
  if (s.modelType === 'deberta') {
    const [q0, k0] = att.splitQkv(att.linear(h, feed(LayerInput.wqkv)!));
    const qb = g.node('Add', [q0, g.node('Reshape', [feed(LayerInput.bq)!, g.constInt64([-1, d])])]);
    q = g.node('Transpose', [qb], { perm: [1, 0, 2] });
    k = g.node('Transpose', [k0], { perm: [1, 0, 2] });
  } else {
    q = att.toHeads(att.linear(h, feed(LayerInput.wq)!, feed(LayerInput.bq)), [1, 0, 2]);
    k = att.toHeads(att.linear(h, feed(LayerInput.wk)!, feed(LayerInput.bk)), [1, 0, 2]);
  }
  const table = (name: LayerInputName) => g.input(name, OnnxType.FLOAT, ['hd', 2 * s.attSpan]);
  const pos = {
    c2p: att.flags.c2p ? att.fromTable(table(LayerInput.posKey), 'c2p') : undefined,
    p2c: att.flags.p2c ? att.fromTable(table(LayerInput.posQuery), 'p2c') : undefined,
  };
  const { terms, probs } = att.termsOf(q, k, pos, layerOutput);
  for (const kind of ['c2c', 'c2p', 'p2c'] as const)
    if (terms[kind]) g.output(terms[kind], layerOutput(kind), OnnxType.FLOAT, ['h', 'n', 'n']);
  g.output(probs, layerOutput('probs'), OnnxType.FLOAT, ['h', 'n', 'n']);
  return g;
}

/**
 * One layer's position projections of the whole relative table (deberta-spec.md §4: PK and PQ of every row),
 * head-major so that a range of heads is a range of rows: outputs `pos_key` = W_pk·Rᵀ + b_pk and `pos_query` =
 * W_pq·Rᵀ + b_pq, each [A, 2S], with R the table (LayerNorm'd as the forward graph does in v2/v3). They depend on
 * the model and the layer only, never on the text: the runtime computes them once per layer and keeps them.
 */
export function buildPositionsGraph(s: ModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    A = s.allHeadSize,
    S2 = 2 * s.attSpan;
  const { c2p, p2c } = termFlags(s);
  let table = g.input(PositionsInput.table, OnnxType.FLOAT, [S2, D]);
  if (s.modelType === 'deberta-v2' && s.normRelEbd) {
    const lnW = g.input(PositionsInput.lnWeight, OnnxType.FLOAT, [D]);
    const lnB = g.input(PositionsInput.lnBias, OnnxType.FLOAT, [D]);
    table = g.node('LayerNormalization', [table, lnW, lnB], { axis: -1, epsilon: { float: s.layerNormEps } });
  }
  const declared = new Map<LayerInputName, string>();
  const w = layerWeights(s, 0);
  const feed = (name: LayerInputName): string | undefined => {
    const spec = w[name];
    if (!spec) return undefined;
    if (!declared.has(name)) declared.set(name, g.input(name, OnnxType.FLOAT, spec.shape.length === 1 ? [A] : [A, D]));
    return declared.get(name);
  };
  const column = g.constInt64([A, 1]);
  const project = (weight: LayerInputName, bias: LayerInputName, out: LayerInputName) => {
    const b = feed(bias);
    const inputs = [feed(weight)!, table, ...(b ? [g.node('Reshape', [b, column])] : [])];
    g.output(g.node('Gemm', inputs, { transB: 1 }), out, OnnxType.FLOAT, [A, S2]);
  };
  const { pkW, pkB, pqW, pqB } = positionFeeds(s);
  if (c2p) project(pkW, pkB, LayerInput.posKey);
  if (p2c) project(pqW, pqB, LayerInput.posQuery);
  return g;
}
