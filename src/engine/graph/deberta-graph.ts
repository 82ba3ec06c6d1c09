import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import type { ModelSpec, TermName } from '../types';
import { activation } from './activation';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * The DeBERTa encoder as one ONNX graph (batch 1, dynamic length n), following deberta-spec.md §4–§5.
 * Per layer it outputs the raw terms and the softmax as [H, n, n]; `last_hidden_state` is [n, D].
 *
 * Relative attention does not project the whole relative table as HF does: the caller feeds `rel_rows`
 * (the distinct table rows the 2n−1 distances of this input use) and two pick lists that lay those rows out by
 * distance; c2p and p2c are then read off a [H, n, 2n] product with the pad-and-reshape "skew" (Transformer-XL),
 * which needs no gather over n² elements. See ./graph-inputs.ts for the index arithmetic.
 */
export const GRAPH_VERSION = 'deberta-lens-graph-3';
export const OPSET = 20;

export const InputName = {
  ids: 'input_ids',
  tokenTypes: 'token_type_ids',
  positions: 'position_ids',
  relRows: 'rel_rows',
  c2pPick: 'c2p_pick',
  p2cPick: 'p2c_pick',
  skewStart: 'skew_start',
  skewEnd: 'skew_end',
  skewShape: 'skew_shape',
  n: 'seq_len',
} as const;

/** Graph output name of a layer's matrix. */
export function termOutput(layer: number, kind: TermName | 'probs'): string {
  return `layer${layer}_${kind}`;
}
export const LAST_HIDDEN = 'last_hidden_state';

export function buildDebertaGraph(ck: Checkpoint): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const W = (name: string, shape: number[]) => g.weight(requireWeight(ck, name, shape));
  const D = s.hiddenSize, E = s.embeddingSize, H = s.numHeads, d = s.headDim, A = s.allHeadSize;
  const relative = s.relativeAttention && s.posAttType.length > 0;
  const hasC2p = relative && s.posAttType.includes('c2p');
  const hasP2c = relative && s.posAttType.includes('p2c');

  const ids = g.input(InputName.ids, OnnxType.INT64, ['n']);
  let e = g.node('Gather', [W('embeddings.word_embeddings.weight', [s.vocabSize, E]), ids], { axis: 0 });
  if (s.positionBiasedInput) {
    const pos = g.input(InputName.positions, OnnxType.INT64, ['n']);
    e = g.node('Add', [e, g.node('Gather', [W('embeddings.position_embeddings.weight', [s.maxPositionEmbeddings, E]), pos], { axis: 0 })]);
  }
  if (s.typeVocabSize > 0) {
    const tt = g.input(InputName.tokenTypes, OnnxType.INT64, ['n']);
    e = g.node('Add', [e, g.node('Gather', [W('embeddings.token_type_embeddings.weight', [s.typeVocabSize, E]), tt], { axis: 0 })]);
  }
  if (E !== D) e = g.node('Gemm', [e, W('embeddings.embed_proj.weight', [D, E])], { transB: 1 });
  const layerNorm = (x: string, prefix: string) =>
    g.node('LayerNormalization', [x, W(`${prefix}.weight`, [D]), W(`${prefix}.bias`, [D])], {
      axis: -1,
      epsilon: { float: s.layerNormEps },
    });
  // The attention mask is all ones for a single unpadded sequence, so the mask multiply is the identity.
  let h = layerNorm(e, 'embeddings.LayerNorm');
  const h0 = h;

  // Relative table rows used by this input (shared by all layers; LayerNorm'd once in v3).
  let rel: string | undefined;
  let skew: ((x: string, out?: string) => string) | undefined;
  if (relative) {
    const rows = g.input(InputName.relRows, OnnxType.INT64, ['u']);
    rel = g.node('Gather', [W('encoder.rel_embeddings.weight', [2 * s.attSpan, D]), rows], { axis: 0 });
    if (s.modelType === 'deberta-v2' && s.normRelEbd) rel = layerNorm(rel, 'encoder.LayerNorm');
    const start = g.input(InputName.skewStart, OnnxType.INT64, [1]);
    const end = g.input(InputName.skewEnd, OnnxType.INT64, [1]);
    const shape = g.input(InputName.skewShape, OnnxType.INT64, [3]);
    const nVec = g.input(InputName.n, OnnxType.INT64, [1]);
    const flatShape = g.constInt64([H, -1]);
    const axis1 = g.constInt64([1]), axis2 = g.constInt64([2]), zero = g.constInt64([0]);
    // out[r, c] = C[r, (n−1) − r + c] for C of shape [H, n, 2n]: flatten, drop n−1, view as [H, n, 2n−1], keep n.
    skew = (x: string, out?: string) => {
      const flat = g.node('Reshape', [x, flatShape]);
      const part = g.node('Slice', [flat, start, end, axis1]);
      return g.node('Slice', [g.node('Reshape', [part, shape]), zero, nVec, axis2], {}, out);
    };
  }
  const c2pPick = hasC2p ? g.input(InputName.c2pPick, OnnxType.INT64, ['2n']) : '';
  const p2cPick = hasP2c ? g.input(InputName.p2cPick, OnnxType.INT64, ['2n']) : '';

  const headsShape = g.constInt64([0, H, d]); // [n, A] → [n, H, d]
  const mergeShape = g.constInt64([0, A]);
  const toHeads = (x: string, perm: number[]) => g.node('Transpose', [g.node('Reshape', [x, headsShape])], { perm });
  const linear = (x: string, prefix: string, out: number, inp: number, bias = true) =>
    g.node('Gemm', bias ? [x, W(`${prefix}.weight`, [out, inp]), W(`${prefix}.bias`, [out])] : [x, W(`${prefix}.weight`, [out, inp])], { transB: 1 });
  const invScale = g.constFloat([1 / scaleOf(s)], []);

  for (let l = 0; l < s.numLayers; l++) {
    const p = `encoder.layer.${l}`;
    const att = `${p}.attention.self`;
    // Content projections, split into heads: q [H, n, d], kT [H, d, n], v [H, n, d].
    let q: string, kT: string, k: string, v: string;
    if (s.modelType === 'deberta') {
      // v1: in_proj rows are grouped per head as [q_h | k_h | v_h] (spec §3); no key bias.
      const qkv = g.node('Reshape', [g.node('Gemm', [h, W(`${att}.in_proj.weight`, [3 * A, D])], { transB: 1 }), g.constInt64([0, H, 3 * d])]);
      const [q0, k0, v0] = g.nodeN('Split', [qkv, g.constInt64([d, d, d])], 3, { axis: 2 });
      const qb = g.node('Add', [q0, g.node('Reshape', [W(`${att}.q_bias`, [A]), g.constInt64([H, d])])]);
      const vb = g.node('Add', [v0, g.node('Reshape', [W(`${att}.v_bias`, [A]), g.constInt64([H, d])])]);
      q = g.node('Transpose', [qb], { perm: [1, 0, 2] });
      k = g.node('Transpose', [k0], { perm: [1, 0, 2] });
      kT = g.node('Transpose', [k0], { perm: [1, 2, 0] });
      v = g.node('Transpose', [vb], { perm: [1, 0, 2] });
    } else {
      const qFlat = linear(h, `${att}.query_proj`, A, D);
      const kFlat = linear(h, `${att}.key_proj`, A, D);
      q = toHeads(qFlat, [1, 0, 2]);
      k = toHeads(kFlat, [1, 0, 2]);
      kT = toHeads(kFlat, [1, 2, 0]);
      v = toHeads(linear(h, `${att}.value_proj`, A, D), [1, 0, 2]);
    }
    const c2c = g.node('MatMul', [q, kT], {}, termOutput(l, 'c2c'));
    let sum = c2c;
    const terms: Partial<Record<TermName, string>> = { c2c };
    if (hasC2p && rel && skew) {
      const pk =
        s.modelType === 'deberta'
          ? linear(rel, `${att}.pos_proj`, A, D, false)
          : linear(rel, s.shareAttKey ? `${att}.key_proj` : `${att}.pos_key_proj`, A, D);
      const pkT = toHeads(g.node('Gather', [pk, c2pPick], { axis: 0 }), [1, 2, 0]); // [H, d, 2n]
      terms.c2p = skew(g.node('MatMul', [q, pkT]), termOutput(l, 'c2p'));
      sum = g.node('Add', [sum, terms.c2p]);
    }
    if (hasP2c && rel && skew) {
      const pq =
        s.modelType === 'deberta'
          ? linear(rel, `${att}.pos_q_proj`, A, D)
          : linear(rel, s.shareAttKey ? `${att}.query_proj` : `${att}.pos_query_proj`, A, D);
      const pqT = toHeads(g.node('Gather', [pq, p2cPick], { axis: 0 }), [1, 2, 0]); // [H, d, 2n]
      const transposed = skew(g.node('MatMul', [k, pqT])); // [H, n(key j), n(query i)]
      terms.p2c = g.node('Transpose', [transposed], { perm: [0, 2, 1] }, termOutput(l, 'p2c'));
      sum = g.node('Add', [sum, terms.p2c]);
    }
    const probs = g.node('Softmax', [g.node('Mul', [sum, invScale])], { axis: -1 }, termOutput(l, 'probs'));
    const ctx = g.node('Reshape', [g.node('Transpose', [g.node('MatMul', [probs, v])], { perm: [1, 0, 2] }), mergeShape]);
    const attOut = layerNorm(g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), h]), `${p}.attention.output.LayerNorm`);
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    h = layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
    if (l === 0 && s.convKernelSize > 0) h = convBlock(g, W, s, h0, h, layerNorm);

    for (const kind of ['c2c', 'c2p', 'p2c'] as const) {
      const t = terms[kind];
      if (t) g.output(t, t, OnnxType.FLOAT, [H, 'n', 'n']);
    }
    g.output(probs, probs, OnnxType.FLOAT, [H, 'n', 'n']);
  }
  g.output(h, LAST_HIDDEN, OnnxType.FLOAT, ['n', D]);
  return g;
}

/** s = √(d·sf), evaluated in float32 as HF does. */
export function scaleOf(s: ModelSpec): number {
  return Math.fround(Math.sqrt(Math.fround(s.headDim * s.scaleFactor)));
}

/** v2 conv block after layer 0 (spec §8): reads the embedding output h⁰, adds to the layer-0 output. */
function convBlock(
  g: GraphBuilder,
  W: (name: string, shape: number[]) => string,
  s: ModelSpec,
  h0: string,
  y: string,
  layerNorm: (x: string, prefix: string) => string,
): string {
  const D = s.hiddenSize, k = s.convKernelSize, pad = (k - 1) / 2;
  const x = g.node('Unsqueeze', [g.node('Transpose', [h0], { perm: [1, 0] }), g.constInt64([0])]); // [1, D, n]
  const conv = g.node('Conv', [x, W('encoder.conv.conv.weight', [D, D / s.convGroups, k]), W('encoder.conv.conv.bias', [D])], {
    group: s.convGroups,
    kernel_shape: [k],
    pads: [pad, pad],
  });
  const c = g.node('Transpose', [g.node('Squeeze', [conv, g.constInt64([0])])], { perm: [1, 0] }); // [n, D]
  return layerNorm(g.node('Add', [y, activation(g, c, s.convAct)]), 'encoder.conv.LayerNorm');
}
