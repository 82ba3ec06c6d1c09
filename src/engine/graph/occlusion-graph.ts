import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import { activation } from './activation';
import { EncoderBuilder, FORWARD_HEAD_GROUP, headGroups } from './deberta-graph';
import { InputName, LayerInput, type LayerInputName, layerWeights, positionFeeds } from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * The occlusion graph: the whole encoder on V inputs of the same length n at once (a batch of variants of one input,
 * each with one token masked or removed), returning only the rows of the last hidden state a head reads. Inputs:
 * `input_ids` [V, n] (and `position_ids`, `token_type_ids` [V, n] where the model has them), the relative rows, pick
 * and skew inputs of n tokens, and `rows` [r]: indices into the V·n stacked rows (variant v's row i is v·n + i).
 * Output `rows` [r, D]. The variants are a batch: every projection is one [V·n, D] product, the heads of all
 * variants are stacked on the attention's head axis (V·H), and the relative rows are projected once for all of them
 * (at 128 tokens those projections are a quarter of a layer's products). Arithmetic per head as the forward graph's
 * (deberta-graph.ts, same attention builder); only DeBERTa v2/v3 with relative attention and no conv block
 * (`occlusionGraphFits`), the other models take the forward graph once per variant.
 */
export const OCCLUSION_GRAPH_VERSION = 'deberta-lens-occlusion-2';
export const OcclusionInput = { rows: 'rows' } as const;
export const OCCLUSION_ROWS = 'rows_out';

/** Whether the batched graph covers this model (relative v2/v3 attention, no conv block). */
export function occlusionGraphFits(ck: Checkpoint): boolean {
  const s = ck.spec;
  return (
    s.modelType === 'deberta-v2' && s.architecture !== 'bert' && s.relativeAttention && s.posAttType.length > 0 && !(s.convKernelSize > 0)
  );
}

export function buildOcclusionGraph(ck: Checkpoint, headGroup = FORWARD_HEAD_GROUP): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    E = s.embeddingSize,
    H = s.numHeads,
    d = s.headDim,
    A = s.allHeadSize;
  const Wt = (name: string, shape: number[]) => g.weight(requireWeight(ck, name, shape));
  const c = (xs: number[]) => g.constInt64(xs);
  const flat = (x: string) => g.node('Reshape', [x, c([-1])]);

  // Embeddings of the V·n stacked tokens.
  const ids = g.input(InputName.ids, OnnxType.INT64, ['v', 'n']);
  let e = g.node('Gather', [Wt('embeddings.word_embeddings.weight', [s.vocabSize, E]), flat(ids)], { axis: 0 });
  if (s.positionBiasedInput) {
    const pos = g.input(InputName.positions, OnnxType.INT64, ['v', 'n']);
    e = g.node('Add', [
      e,
      g.node('Gather', [Wt('embeddings.position_embeddings.weight', [s.maxPositionEmbeddings, E]), flat(pos)], { axis: 0 }),
    ]);
  }
  if (s.typeVocabSize > 0) {
    const tt = g.input(InputName.tokenTypes, OnnxType.INT64, ['v', 'n']);
    e = g.node('Add', [e, g.node('Gather', [Wt('embeddings.token_type_embeddings.weight', [s.typeVocabSize, E]), flat(tt)], { axis: 0 })]);
  }
  if (E !== D) e = g.node('Gemm', [e, Wt('embeddings.embed_proj.weight', [D, E])], { transB: 1 });
  // The attention builder declares the pick, skew and seq_len inputs (relative models).
  const enc = new EncoderBuilder(g, ck, H);
  const att = enc.att;
  let x = enc.layerNorm(e, 'embeddings.LayerNorm'); // [V·n, D]

  const relRows = g.input(InputName.relRows, OnnxType.INT64, ['u']);
  let rel = g.node('Gather', [Wt('encoder.rel_embeddings.weight', [2 * s.attSpan, D]), relRows], { axis: 0 });
  if (s.normRelEbd) rel = enc.layerNorm(rel, 'encoder.LayerNorm');

  const rows = g.input(OcclusionInput.rows, OnnxType.INT64, ['r']);
  const nVec = InputName.n;
  const V = g.node('Slice', [g.node('Shape', [ids]), c([0]), c([1]), c([0])]); // [1]
  const shape = (...parts: string[]) => g.node('Concat', parts, { axis: 0 });
  // Attention in groups of heads, as the forward graph computes it (same arithmetic per head): [V·n, A] →
  // [V, H, n, d] → per group [V·g, n, d], so one group's [V·g, n, 2n] arrays are the working set, not all heads'.
  const sizes = headGroups(H, headGroup);
  const toHeads4 = (y: string) => g.node('Transpose', [g.node('Reshape', [y, shape(V, nVec, c([H, d]))])], { perm: [0, 2, 1, 3] });
  const byGroup = (y4: string) => (sizes.length === 1 ? [y4] : g.nodeN('Split', [y4, c(sizes)], sizes.length, { axis: 1 }));
  const stacked = (y: string) => g.node('Reshape', [y, shape(c([-1]), nVec, c([d]))]); // [V, g, n, d] → [V·g, n, d]
  const byColumn = (y: string | undefined) =>
    y === undefined ? [] : sizes.length === 1 ? [y] : g.nodeN('Split', [y, c(sizes.map((h) => h * d))], sizes.length, { axis: 1 });
  const tileRepeats = shape(V, c([1, 1]));
  const tile = (y: string) => g.node('Tile', [y, tileRepeats]);
  for (let l = 0; l < s.numLayers; l++) {
    const p = `encoder.layer.${l}`;
    const w = layerWeights(s, l);
    const W = (name: LayerInputName) => enc.W(w[name]!.name, w[name]!.shape);
    const bias = (name: LayerInputName) => (w[name] ? W(name) : undefined);
    const qs = byGroup(toHeads4(att.linear(x, W(LayerInput.wq), W(LayerInput.bq))));
    const ks = byGroup(toHeads4(att.linear(x, W(LayerInput.wk), W(LayerInput.bk))));
    const vs = byGroup(
      toHeads4(att.linear(x, enc.W(`${p}.attention.self.value_proj.weight`, [A, D]), enc.W(`${p}.attention.self.value_proj.bias`, [A]))),
    );
    // The relative rows' projections, once for every variant.
    const { pkW, pkB, pqW, pqB } = positionFeeds(s);
    const pks = byColumn(att.flags.c2p ? att.linear(rel, W(pkW), bias(pkB)) : undefined);
    const pqs = byColumn(att.flags.p2c ? att.linear(rel, W(pqW), bias(pqB)) : undefined);
    const groups = sizes.map((gs, j) => {
      const { probs } = att.terms(stacked(qs[j]!), stacked(ks[j]!), pks[j], pqs[j], undefined, undefined, tile);
      const out = g.node('MatMul', [probs, stacked(vs[j]!)]); // [V·g, n, d]
      return g.node('Reshape', [out, shape(V, c([gs]), nVec, c([d]))]);
    });
    const heads = groups.length === 1 ? groups[0]! : g.node('Concat', groups, { axis: 1 }); // [V, H, n, d]
    let ctx = g.node('Reshape', [g.node('Transpose', [heads], { perm: [0, 2, 1, 3] }), c([-1, A])]);
    const linear = (y: string, prefix: string, out: number, inp: number) =>
      att.linear(y, enc.W(`${prefix}.weight`, [out, inp]), enc.W(`${prefix}.bias`, [out]));
    if (l === s.numLayers - 1) {
      // The rest of the last layer is row by row: only the rows the head reads.
      ctx = g.node('Gather', [ctx, rows], { axis: 0 });
      x = g.node('Gather', [x, rows], { axis: 0 });
    }
    const attOut = enc.layerNorm(g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), x]), `${p}.attention.output.LayerNorm`);
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    x = enc.layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
  }
  g.output(x, OCCLUSION_ROWS, OnnxType.FLOAT, ['r', D]);
  return g;
}
