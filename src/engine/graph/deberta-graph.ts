import { at } from '../../shared/checked';
import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import type { ModelSpec, TermName } from '../types';
import { activation } from './activation';
import { AttentionBuilder, type TermEdit } from './attention-builder';
import { EMBEDDING_PARTS, embeddingParts } from './bert-decomposition';
import {
  InputName,
  LAST_HIDDEN,
  LayerInput,
  type LayerInputName,
  layerInputOutput,
  layerWeights,
  positionFeeds,
  REL_OUTPUT,
  TailInput,
} from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * The DeBERTa encoder as ONNX graphs (batch 1, dynamic length n), following deberta-spec.md §4–§5:
 *
 * - the forward graph runs every layer and outputs what is needed to recompute any layer's attention exactly
 *   later: each layer's input hidden states `[n, D]` and the relative table rows `[u, D]` (O(L·n·D) in all);
 * - the positions graph projects a layer's whole relative table through its position key and query (fed as
 *   inputs): text-independent, so the runtime computes it once per layer and keeps it;
 * - the layer graph takes one layer's input states, that layer's query/key weights and its projected table for a
 *   range of heads (fed as inputs, so one small graph serves every layer and any head count) and gives the raw
 *   terms and the softmax `[h, n, n]` for those heads. All graphs build the attention with the same code below,
 *   so the numbers agree.
 *
 * Relative attention does not project the whole relative table as HF does: the caller feeds `rel_rows`
 * (the distinct table rows the 2n−1 distances of this input use) and two pick lists that lay those rows out by
 * distance; c2p and p2c are then read off a [H, n, 2n] product with the pad-and-reshape "skew" (Transformer-XL),
 * which needs no gather over n² elements. See ./graph-inputs.ts for the index arithmetic. This file builds the
 * forward and tail graphs; ./layer-graphs.ts the layer and positions graphs, ./attention-builder.ts the attention
 * they share, ./deberta-io.ts the names of their inputs and outputs.
 */
export const GRAPH_VERSION = 'deberta-lens-graph-7';
/**
 * The forward graph computes attention in groups of at most this many heads, one group after the other, so its
 * working memory is that of a few heads' [n, n] and [n, 2n] arrays, not all of them at once (v3-large at 2048
 * tokens: ~0.5 GB instead of ~2 GB). The numbers are the same: every head's arithmetic is unchanged.
 */
export const FORWARD_HEAD_GROUP = 4;
export const OPSET = 20;

/** The full encoder: per-layer input states, the relative rows and the last hidden state as outputs. */
export function buildForwardGraph(ck: Checkpoint, headGroup = FORWARD_HEAD_GROUP): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const W = (name: string, shape: number[]) => g.weight(requireWeight(ck, name, shape));
  const D = s.hiddenSize,
    E = s.embeddingSize;

  const ids = g.input(InputName.ids, OnnxType.INT64, ['n']);
  const word = g.node('Gather', [W('embeddings.word_embeddings.weight', [s.vocabSize, E]), ids], { axis: 0 });
  let e = word;
  let position: string | undefined, tokenType: string | undefined;
  if (s.positionBiasedInput) {
    const pos = g.input(InputName.positions, OnnxType.INT64, ['n']);
    position = g.node('Gather', [W('embeddings.position_embeddings.weight', [s.maxPositionEmbeddings, E]), pos], { axis: 0 });
    e = g.node('Add', [e, position]);
  }
  if (s.typeVocabSize > 0) {
    const tt = g.input(InputName.tokenTypes, OnnxType.INT64, ['n']);
    tokenType = g.node('Gather', [W('embeddings.token_type_embeddings.weight', [s.typeVocabSize, E]), tt], { axis: 0 });
    e = g.node('Add', [e, tokenType]);
  }
  if (s.architecture === 'bert') {
    // The parts of the embedding LayerNorm's output that layer 0's score decomposition projects.
    const zeros = () => g.node('Mul', [word, g.constFloat([0], [])]);
    const parts = embeddingParts(
      g,
      word,
      position ?? zeros(),
      tokenType ?? zeros(),
      W('embeddings.LayerNorm.weight', [D]),
      W('embeddings.LayerNorm.bias', [D]),
      s.layerNormEps,
    );
    for (const k of ['content', 'position', 'rest'] as const) g.output(parts[k], EMBEDDING_PARTS[k], OnnxType.FLOAT, ['n', D]);
  }
  if (E !== D) e = g.node('Gemm', [e, W('embeddings.embed_proj.weight', [D, E])], { transB: 1 });
  // The attention mask is all ones for a single unpadded sequence, so the mask multiply is the identity.
  const enc = new EncoderBuilder(g, ck, headGroup);
  let h = enc.layerNorm(e, 'embeddings.LayerNorm');
  const h0 = h;

  // Relative table rows used by this input (shared by all layers; LayerNorm'd once in v3).
  let rel: string | undefined;
  if (enc.att.flags.relative) {
    const rows = g.input(InputName.relRows, OnnxType.INT64, ['u']);
    rel = g.node('Gather', [W('encoder.rel_embeddings.weight', [2 * s.attSpan, D]), rows], { axis: 0 });
    if (s.modelType === 'deberta-v2' && s.normRelEbd) rel = enc.layerNorm(rel, 'encoder.LayerNorm');
    g.output(rel, REL_OUTPUT, OnnxType.FLOAT, ['u', D]);
  }
  for (let l = 0; l < s.numLayers; l++) {
    g.output(h, layerInputOutput(l), OnnxType.FLOAT, ['n', D]);
    h = enc.layer(l, h, h0, rel);
  }
  g.output(h, LAST_HIDDEN, OnnxType.FLOAT, ['n', D]);
  return g;
}

/** Head counts of the groups the encoder computes attention in, one group after the other. */
export function headGroups(numHeads: number, headGroup: number): number[] {
  return Array.from({ length: Math.ceil(numHeads / headGroup) }, (_, k) => Math.min(headGroup, numHeads - k * headGroup));
}

/** One encoder layer (attention, output, feed-forward, and v2's conv block after layer 0) over checkpoint weights. */
export class EncoderBuilder {
  readonly att: AttentionBuilder;
  private readonly mergeShape: string;

  constructor(
    readonly g: GraphBuilder,
    private readonly ck: Checkpoint,
    private readonly headGroup: number,
  ) {
    this.att = new AttentionBuilder(g, ck.spec);
    this.mergeShape = g.constInt64([0, ck.spec.allHeadSize]);
  }

  W(name: string, shape: number[]): string {
    return this.g.weight(requireWeight(this.ck, name, shape));
  }

  layerNorm(x: string, prefix: string): string {
    const D = this.ck.spec.hiddenSize;
    return this.g.node('LayerNormalization', [x, this.W(`${prefix}.weight`, [D]), this.W(`${prefix}.bias`, [D])], {
      axis: -1,
      epsilon: { float: this.ck.spec.layerNormEps },
    });
  }

  /** Layer l's weights by name or by layer input, and the sizes a layer's graph needs. */
  private parts(l: number) {
    const s = this.ck.spec;
    const W = (name: string, shape: number[]) => this.W(name, shape);
    const w = layerWeights(s, l);
    const byName = (feed: LayerInputName) => W(w[feed]!.name, w[feed]!.shape);
    const bias = (feed: LayerInputName) => (w[feed] ? byName(feed) : undefined);
    return { s, W, byName, bias, p: `encoder.layer.${l}`, D: s.hiddenSize, H: s.numHeads, d: s.headDim, A: s.allHeadSize };
  }

  /**
   * Layer l's query, key and value of the rows h `[rows, D]`, each `[rows, H, d]` (v1's fused in_proj with its q and v
   * biases; v2/v3's and BERT's three projections). Rows of several sequences stacked give each its own.
   */
  projectQkv(l: number, h: string): [string, string, string] {
    const { g, att } = this;
    const { s, W, byName, p, D, H, d, A } = this.parts(l);
    if (s.modelType === 'deberta') {
      const [q0, k0, v0] = att.splitQkv(att.linear(h, byName(LayerInput.wqkv)));
      const qb = g.node('Add', [q0, g.node('Reshape', [byName(LayerInput.bq), g.constInt64([H, d])])]);
      const vb = g.node('Add', [v0, g.node('Reshape', [W(`${p}.attention.self.v_bias`, [A]), g.constInt64([H, d])])]);
      return [qb, k0, vb];
    }
    const value = s.architecture === 'bert' ? 'value' : 'value_proj';
    const heads = (x: string) => g.node('Reshape', [x, g.constInt64([0, -1, d])]);
    return [
      heads(att.linear(h, byName(LayerInput.wq), byName(LayerInput.bq))),
      heads(att.linear(h, byName(LayerInput.wk), byName(LayerInput.bk))),
      heads(att.linear(h, W(`${p}.attention.self.${value}.weight`, [A, D]), W(`${p}.attention.self.${value}.bias`, [A]))),
    ];
  }

  /**
   * Layer l on input h; h0 is the embedding output (read by v2's conv block after layer 0). `edit(group)` gives
   * the term edit of each head group (see headGroups), when the layer is intervened on. With `query` (the Enhanced
   * Mask Decoder's passes), the queries and the residuals come from `query` and only keys and values from h, and no
   * conv block follows (microsoft's encoder applies it between layers, not inside one). `names(kind)` names the
   * attention outputs of a one-group layer.
   */
  layer(
    l: number,
    h: string,
    h0: string,
    rel: string | undefined,
    edit?: (group: number) => TermEdit,
    query?: string,
    names?: (kind: TermName | 'probs') => string,
  ): string {
    const { g, att } = this;
    const { s, W, byName, bias, p, D, H, d, A } = this.parts(l);
    const toHeads = (x: string) => g.node('Transpose', [x], { perm: [1, 0, 2] });
    const [q0, k0, v0] = this.projectQkv(l, h);
    const [q, k, v] = [toHeads(query ? this.projectQkv(l, query)[0] : q0), toHeads(k0), toHeads(v0)];
    const residual = query ?? h;
    const { pkW, pkB, pqW, pqB } = positionFeeds(s);
    const pk = rel && att.flags.c2p ? att.linear(rel, byName(pkW), bias(pkB)) : undefined;
    const pq = rel && att.flags.p2c ? att.linear(rel, byName(pqW), bias(pqB)) : undefined;
    const sizes = headGroups(H, this.headGroup);
    let heads: string;
    if (sizes.length === 1) heads = g.node('MatMul', [att.terms(q, k, pk, pq, names, edit?.(0)).probs, v]);
    else {
      // [H, ·, ·] split by head on axis 0; the projected relative rows [u, H·d] split by head on axis 1.
      const byHead = (x: string) => g.nodeN('Split', [x, g.constInt64(sizes)], sizes.length, { axis: 0 });
      const byColumn = (x: string | undefined) =>
        x ? g.nodeN('Split', [x, g.constInt64(sizes.map((h) => h * d))], sizes.length, { axis: 1 }) : [];
      const [qs, ks, vs, pks, pqs] = [byHead(q), byHead(k), byHead(v), byColumn(pk), byColumn(pq)];
      const group = (xs: string[], j: number) => at(xs, j, 'head group');
      heads = g.node(
        'Concat',
        sizes.map((_, j) =>
          g.node('MatMul', [att.terms(group(qs, j), group(ks, j), pks[j], pqs[j], undefined, edit?.(j)).probs, group(vs, j)]),
        ),
        { axis: 0 },
      );
    }
    const ctx = g.node('Reshape', [g.node('Transpose', [heads], { perm: [1, 0, 2] }), this.mergeShape]);
    const linear = (x: string, prefix: string, out: number, inp: number) =>
      att.linear(x, W(`${prefix}.weight`, [out, inp]), W(`${prefix}.bias`, [out]));
    const attOut = this.layerNorm(
      g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), residual]),
      `${p}.attention.output.LayerNorm`,
    );
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    let out = this.layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
    if (l === 0 && s.convKernelSize > 0 && !query) out = convBlock(g, W, s, h0, out, (x, prefix) => this.layerNorm(x, prefix));
    return out;
  }
}

/**
 * Layers start…L−1 with an intervention: inputs `hidden` (layer `start`'s input states [n, D], as the forward graph
 * outputs them), `rel` (the forward graph's relative rows), the pick and skew inputs, and per term a keep mask
 * [L − start, H]; output the last hidden state (and each later layer's input state). Each term becomes keep·term + (1 − keep)·mean·rowMean(term) before
 * it is added to the score, so all-ones masks run the layers exactly as the forward graph does (same head groups).
 */
export function buildTailGraph(ck: Checkpoint, start: number, headGroup = FORWARD_HEAD_GROUP): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    H = s.numHeads,
    Lt = s.numLayers - start;
  const enc = new EncoderBuilder(g, ck, headGroup);
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  const rel = enc.att.flags.relative ? g.input(LayerInput.rel, OnnxType.FLOAT, ['u', D]) : undefined;
  const kinds = (['c2c', 'c2p', 'p2c'] as const).filter((t) => t === 'c2c' || enc.att.flags[t]);
  const keepIn = Object.fromEntries(kinds.map((t) => [t, g.input(TailInput.keep(t), OnnxType.FLOAT, [Lt, H])])) as Partial<
    Record<TermName, string>
  >;
  const mean = g.input(TailInput.mean, OnnxType.FLOAT, [1]);
  const one = g.constFloat([1], []),
    lastAxis = g.constInt64([-1]),
    perHead = g.constInt64([-1, 1, 1]);
  const sizes = headGroups(H, headGroup);
  const byGroup = (x: string) => (sizes.length === 1 ? [x] : g.nodeN('Split', [x, g.constInt64(sizes)], sizes.length, { axis: 0 }));
  let h = hidden;
  for (let l = start; l < s.numLayers; l++) {
    // The ablated run's later layer inputs, for viewing its attention (fetched only when asked for).
    if (l > start) g.output(h, layerInputOutput(l), OnnxType.FLOAT, ['n', D]);
    // Per term: keep and replace-by-mean weights [h, 1, 1] of each head group.
    const weights = new Map<TermName, { keep: string[]; toMean: string[] }>();
    for (const t of kinds) {
      const keep = g.node('Reshape', [g.node('Gather', [keepIn[t]!, g.constInt64([l - start])], { axis: 0 }), perHead]);
      weights.set(t, { keep: byGroup(keep), toMean: byGroup(g.node('Mul', [g.node('Sub', [one, keep]), mean])) });
    }
    const edit =
      (j: number): TermEdit =>
      (kind, term) => {
        const w = weights.get(kind)!;
        const rowMean = g.node('ReduceMean', [term, lastAxis], { keepdims: 1 });
        return g.node('Add', [g.node('Mul', [term, at(w.keep, j, 'head group')]), g.node('Mul', [rowMean, at(w.toMean, j, 'head group')])]);
      };
    h = enc.layer(l, h, hidden, rel, edit);
  }
  g.output(h, LAST_HIDDEN, OnnxType.FLOAT, ['n', D]);
  return g;
}

/**
 * v2 conv block after layer 0 (spec §8): reads the embedding output h⁰, adds to the layer-0 output. With `batch`
 * (the sequence length n as a [1] tensor), h⁰ and y hold several sequences' rows stacked, [V·n, D], each convolved
 * on its own (the batch axis of Conv).
 */
export function convBlock(
  g: GraphBuilder,
  W: (name: string, shape: number[]) => string,
  s: ModelSpec,
  h0: string,
  y: string,
  layerNorm: (x: string, prefix: string) => string,
  batch?: { n: string },
): string {
  const D = s.hiddenSize,
    k = s.convKernelSize,
    pad = (k - 1) / 2;
  const x = batch
    ? g.node('Transpose', [g.node('Reshape', [h0, g.node('Concat', [g.constInt64([-1]), batch.n, g.constInt64([D])], { axis: 0 })])], {
        perm: [0, 2, 1],
      }) // [V, D, n]
    : g.node('Unsqueeze', [g.node('Transpose', [h0], { perm: [1, 0] }), g.constInt64([0])]); // [1, D, n]
  const conv = g.node('Conv', [x, W('encoder.conv.conv.weight', [D, D / s.convGroups, k]), W('encoder.conv.conv.bias', [D])], {
    group: s.convGroups,
    kernel_shape: [k],
    pads: [pad, pad],
  });
  const c = batch
    ? g.node('Reshape', [g.node('Transpose', [conv], { perm: [0, 2, 1] }), g.constInt64([-1, D])]) // [V·n, D]
    : g.node('Transpose', [g.node('Squeeze', [conv, g.constInt64([0])])], { perm: [1, 0] }); // [n, D]
  return layerNorm(g.node('Add', [y, activation(g, c, s.convAct)]), 'encoder.conv.LayerNorm');
}
