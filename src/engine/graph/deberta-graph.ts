import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import type { ModelSpec, TermName } from '../types';
import { activation } from './activation';
import { EMBEDDING_PARTS, embeddingParts } from './bert-decomposition';
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
 * which needs no gather over n² elements. See ./graph-inputs.ts for the index arithmetic.
 */
export const GRAPH_VERSION = 'deberta-lens-graph-7';
/**
 * The forward graph computes attention in groups of at most this many heads, one group after the other, so its
 * working memory is that of a few heads' [n, n] and [n, 2n] arrays, not all of them at once (v3-large at 2048
 * tokens: ~0.5 GB instead of ~2 GB). The numbers are the same: every head's arithmetic is unchanged.
 */
export const FORWARD_HEAD_GROUP = 4;
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

/** Inputs of the layer graph besides the pick and skew inputs it shares with the forward graph. */
export const LayerInput = {
  hidden: 'hidden',
  rel: 'rel',
  /** v2/v3: query and key projections; v1: the per-head [q|k|v] in_proj and the query bias. */
  wq: 'w_q',
  bq: 'b_q',
  wk: 'w_k',
  bk: 'b_k',
  wqkv: 'w_qkv',
  /** Position key (c2p) and position query (p2c) projections, when the model does not share them. */
  wpk: 'w_pk',
  bpk: 'b_pk',
  wpq: 'w_pq',
  bpq: 'b_pq',
  /** The layer's projected relative table (the positions graph's outputs), `[h·d, 2S]` for a range of heads. */
  posKey: 'pos_key',
  posQuery: 'pos_query',
} as const;
export type LayerInputName = (typeof LayerInput)[keyof typeof LayerInput];

/** Forward graph output: the hidden states entering layer l. */
export function layerInputOutput(layer: number): string {
  return `layer${layer}_input`;
}
export const REL_OUTPUT = 'rel_embeddings';
export const LAST_HIDDEN = 'last_hidden_state';
/** Layer graph output of one matrix kind. */
export function layerOutput(kind: TermName | 'probs'): string {
  return kind;
}

/** Which terms a spec has; shared by both graphs and the feeds. */
function termFlags(s: ModelSpec) {
  const relative = s.relativeAttention && s.posAttType.length > 0;
  return { relative, c2p: relative && s.posAttType.includes('c2p'), p2c: relative && s.posAttType.includes('p2c') };
}

/** Shared pieces of both graphs: head reshapes, linear layers, the skew and the attention terms. */
class AttentionBuilder {
  readonly flags: ReturnType<typeof termFlags>;
  private readonly headsShape: string;
  private readonly invScale: string;
  private skewFn?: (x: string, out?: string) => string;
  private c2pPick = '';
  private p2cPick = '';

  constructor(
    readonly g: GraphBuilder,
    readonly s: ModelSpec,
  ) {
    this.flags = termFlags(s);
    this.headsShape = g.constInt64([0, -1, s.headDim]); // [n, h·d] → [n, h, d], any head count h
    this.invScale = g.constFloat([1 / scaleOf(s)], []);
    if (!this.flags.relative) return;
    const start = g.input(InputName.skewStart, OnnxType.INT64, [1]);
    const end = g.input(InputName.skewEnd, OnnxType.INT64, [1]);
    const shape = g.input(InputName.skewShape, OnnxType.INT64, [3]);
    const nVec = g.input(InputName.n, OnnxType.INT64, [1]);
    const flatShape = g.constInt64([0, -1]);
    const axis1 = g.constInt64([1]), axis2 = g.constInt64([2]), zero = g.constInt64([0]);
    // out[r, c] = C[r, (n−1) − r + c] for C of shape [h, n, 2n]: flatten, drop n−1, view as [h, n, 2n−1], keep n.
    this.skewFn = (x: string, out?: string) => {
      const flat = g.node('Reshape', [x, flatShape]);
      const part = g.node('Slice', [flat, start, end, axis1]);
      return g.node('Slice', [g.node('Reshape', [part, shape]), zero, nVec, axis2], {}, out);
    };
    if (this.flags.c2p) this.c2pPick = g.input(InputName.c2pPick, OnnxType.INT64, ['2n']);
    if (this.flags.p2c) this.p2cPick = g.input(InputName.p2cPick, OnnxType.INT64, ['2n']);
  }

  toHeads(x: string, perm: number[]): string {
    return this.g.node('Transpose', [this.g.node('Reshape', [x, this.headsShape])], { perm });
  }

  linear(x: string, w: string, b?: string): string {
    return this.g.node('Gemm', b ? [x, w, b] : [x, w], { transB: 1 });
  }

  /** v1 in_proj output [n, h·3d] (rows grouped per head as [q_h | k_h | v_h]) → q, k, v as [n, h, d]. */
  splitQkv(qkvFlat: string): [string, string, string] {
    const d = this.s.headDim;
    const qkv = this.g.node('Reshape', [qkvFlat, this.g.constInt64([0, -1, 3 * d])]);
    const [q, k, v] = this.g.nodeN('Split', [qkv, this.g.constInt64([d, d, d])], 3, { axis: 2 });
    return [q, k, v];
  }

  /**
   * c2c, c2p, p2c and the softmax for heads given as q, k `[h, n, d]`, and the projected relative rows pk, pq
   * `[u, h·d]` (undefined for a term the model lacks). Names the outputs when `names` is given.
   */
  terms(q: string, k: string, pk: string | undefined, pq: string | undefined, names?: (kind: TermName | 'probs') => string, edit?: TermEdit, tile?: (x: string) => string) {
    // [h, d, 2n]; `tile` repeats it for a batch of variants whose heads are stacked on axis 0.
    const byDistance = (p: string, pick: string) => () => {
      const laid = this.toHeads(this.g.node('Gather', [p, pick], { axis: 0 }), [1, 2, 0]);
      return tile ? tile(laid) : laid;
    };
    return this.termsOf(q, k, { c2p: pk ? byDistance(pk, this.c2pPick) : undefined, p2c: pq ? byDistance(pq, this.p2cPick) : undefined }, names, edit);
  }

  /**
   * The projected relative table `[h·d, 2S]` of a range of heads (see buildPositionsGraph) laid out by distance
   * for one term, `[h, d, 2n]`: the picks are then rows of the table, not of the rows this input uses.
   */
  fromTable(table: string, kind: 'c2p' | 'p2c'): () => string {
    const g = this.g;
    const heads = g.constInt64([-1, this.s.headDim, 2 * this.s.attSpan]);
    return () => g.node('Gather', [g.node('Reshape', [table, heads]), kind === 'c2p' ? this.c2pPick : this.p2cPick], { axis: 2 });
  }

  /** terms() with the position projections given as makers of their `[h, d, 2n]` layout (called where needed). */
  termsOf(q: string, k: string, pos: { c2p?: () => string; p2c?: () => string }, names?: (kind: TermName | 'probs') => string, edit?: TermEdit) {
    const g = this.g;
    const edited = (kind: TermName, t: string) => (edit ? edit(kind, t) : t);
    const kT = g.node('Transpose', [k], { perm: [0, 2, 1] });
    const c2c = g.node('MatMul', [q, kT], {}, names?.('c2c'));
    const terms: Partial<Record<TermName, string>> = { c2c };
    let sum = edited('c2c', c2c);
    if (this.flags.c2p && pos.c2p && this.skewFn) {
      const pkT = pos.c2p(); // [h, d, 2n]
      terms.c2p = this.skewFn(g.node('MatMul', [q, pkT]), names?.('c2p'));
      sum = g.node('Add', [sum, edited('c2p', terms.c2p)]);
    }
    if (this.flags.p2c && pos.p2c && this.skewFn) {
      const pqT = pos.p2c(); // [h, d, 2n]
      const transposed = this.skewFn(g.node('MatMul', [k, pqT])); // [h, n(key j), n(query i)]
      terms.p2c = g.node('Transpose', [transposed], { perm: [0, 2, 1] }, names?.('p2c'));
      sum = g.node('Add', [sum, edited('p2c', terms.p2c)]);
    }
    const probs = g.node('Softmax', [g.node('Mul', [sum, this.invScale])], { axis: -1 }, names?.('probs'));
    return { terms, probs };
  }
}

/** The full encoder: per-layer input states, the relative rows and the last hidden state as outputs. */
export function buildForwardGraph(ck: Checkpoint, headGroup = FORWARD_HEAD_GROUP): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const W = (name: string, shape: number[]) => g.weight(requireWeight(ck, name, shape));
  const D = s.hiddenSize, E = s.embeddingSize;

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
    const parts = embeddingParts(g, word, position ?? zeros(), tokenType ?? zeros(),
      W('embeddings.LayerNorm.weight', [D]), W('embeddings.LayerNorm.bias', [D]), s.layerNormEps);
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

/** Changes one raw attention term of a group of heads before it is added to the score (an intervention). */
export type TermEdit = (kind: TermName, term: string) => string;

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

  /**
   * Layer l on input h; h0 is the embedding output (read by v2's conv block after layer 0). `edit(group)` gives
   * the term edit of each head group (see headGroups), when the layer is intervened on.
   */
  layer(l: number, h: string, h0: string, rel: string | undefined, edit?: (group: number) => TermEdit): string {
    const { g, att } = this;
    const s = this.ck.spec;
    const W = (name: string, shape: number[]) => this.W(name, shape);
    const D = s.hiddenSize, H = s.numHeads, d = s.headDim, A = s.allHeadSize;
    const p = `encoder.layer.${l}`;
    const w = layerWeights(s, l);
    const byName = (feed: LayerInputName) => W(w[feed]!.name, w[feed]!.shape);
    const bias = (feed: LayerInputName) => (w[feed] ? byName(feed) : undefined);
    let q: string, k: string, v: string;
    if (s.modelType === 'deberta') {
      const [q0, k0, v0] = att.splitQkv(att.linear(h, byName(LayerInput.wqkv)));
      const qb = g.node('Add', [q0, g.node('Reshape', [byName(LayerInput.bq), g.constInt64([H, d])])]);
      const vb = g.node('Add', [v0, g.node('Reshape', [W(`${p}.attention.self.v_bias`, [A]), g.constInt64([H, d])])]);
      q = g.node('Transpose', [qb], { perm: [1, 0, 2] });
      k = g.node('Transpose', [k0], { perm: [1, 0, 2] });
      v = g.node('Transpose', [vb], { perm: [1, 0, 2] });
    } else {
      const value = s.architecture === 'bert' ? 'value' : 'value_proj';
      q = att.toHeads(att.linear(h, byName(LayerInput.wq), byName(LayerInput.bq)), [1, 0, 2]);
      k = att.toHeads(att.linear(h, byName(LayerInput.wk), byName(LayerInput.bk)), [1, 0, 2]);
      v = att.toHeads(att.linear(h, W(`${p}.attention.self.${value}.weight`, [A, D]), W(`${p}.attention.self.${value}.bias`, [A])), [1, 0, 2]);
    }
    const { pkW, pkB, pqW, pqB } = positionFeeds(s);
    const pk = rel && att.flags.c2p ? att.linear(rel, byName(pkW), bias(pkB)) : undefined;
    const pq = rel && att.flags.p2c ? att.linear(rel, byName(pqW), bias(pqB)) : undefined;
    const sizes = headGroups(H, this.headGroup);
    let heads: string;
    if (sizes.length === 1) heads = g.node('MatMul', [att.terms(q, k, pk, pq, undefined, edit?.(0)).probs, v]);
    else {
      // [H, ·, ·] split by head on axis 0; the projected relative rows [u, H·d] split by head on axis 1.
      const byHead = (x: string) => g.nodeN('Split', [x, g.constInt64(sizes)], sizes.length, { axis: 0 });
      const byColumn = (x: string | undefined) => (x ? g.nodeN('Split', [x, g.constInt64(sizes.map((h) => h * d))], sizes.length, { axis: 1 }) : []);
      const [qs, ks, vs, pks, pqs] = [byHead(q), byHead(k), byHead(v), byColumn(pk), byColumn(pq)];
      heads = g.node('Concat', sizes.map((_, j) => g.node('MatMul', [att.terms(qs[j], ks[j], pks[j], pqs[j], undefined, edit?.(j)).probs, vs[j]])), { axis: 0 });
    }
    const ctx = g.node('Reshape', [g.node('Transpose', [heads], { perm: [1, 0, 2] }), this.mergeShape]);
    const linear = (x: string, prefix: string, out: number, inp: number) => att.linear(x, W(`${prefix}.weight`, [out, inp]), W(`${prefix}.bias`, [out]));
    const attOut = this.layerNorm(g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), h]), `${p}.attention.output.LayerNorm`);
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    let out = this.layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
    if (l === 0 && s.convKernelSize > 0) out = convBlock(g, W, s, h0, out, (x, prefix) => this.layerNorm(x, prefix));
    return out;
  }
}

/** Inputs of the tail graph besides `hidden`, `rel` and the pick and skew inputs. */
export const TailInput = {
  /** Per term: [layers from the start layer on, heads] multipliers of the raw term; 1 keeps it. */
  keep: (t: TermName) => `keep_${t}`,
  /** [1]: 0 = a removed term becomes 0; 1 = it becomes its mean over key positions (per query row). */
  mean: 'ablate_mean',
} as const;

/**
 * Layers start…L−1 with an intervention: inputs `hidden` (layer `start`'s input states [n, D], as the forward graph
 * outputs them), `rel` (the forward graph's relative rows), the pick and skew inputs, and per term a keep mask
 * [L − start, H]; output the last hidden state (and each later layer's input state). Each term becomes keep·term + (1 − keep)·mean·rowMean(term) before
 * it is added to the score, so all-ones masks run the layers exactly as the forward graph does (same head groups).
 */
export function buildTailGraph(ck: Checkpoint, start: number, headGroup = FORWARD_HEAD_GROUP): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize, H = s.numHeads, Lt = s.numLayers - start;
  const enc = new EncoderBuilder(g, ck, headGroup);
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  const rel = enc.att.flags.relative ? g.input(LayerInput.rel, OnnxType.FLOAT, ['u', D]) : undefined;
  const kinds = (['c2c', 'c2p', 'p2c'] as const).filter((t) => t === 'c2c' || enc.att.flags[t]);
  const keepIn = Object.fromEntries(kinds.map((t) => [t, g.input(TailInput.keep(t), OnnxType.FLOAT, [Lt, H])])) as Partial<Record<TermName, string>>;
  const mean = g.input(TailInput.mean, OnnxType.FLOAT, [1]);
  const one = g.constFloat([1], []), lastAxis = g.constInt64([-1]), perHead = g.constInt64([-1, 1, 1]);
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
    const edit = (j: number): TermEdit => (kind, term) => {
      const w = weights.get(kind)!;
      const rowMean = g.node('ReduceMean', [term, lastAxis], { keepdims: 1 });
      return g.node('Add', [g.node('Mul', [term, w.keep[j]]), g.node('Mul', [rowMean, w.toMean[j]])]);
    };
    h = enc.layer(l, h, hidden, rel, edit);
  }
  g.output(h, LAST_HIDDEN, OnnxType.FLOAT, ['n', D]);
  return g;
}

/** Feed names of the position projections: the content projections when the model shares them. */
export function positionFeeds(s: ModelSpec): { pkW: LayerInputName; pkB: LayerInputName; pqW: LayerInputName; pqB: LayerInputName } {
  if (s.modelType === 'deberta-v2' && s.shareAttKey) return { pkW: LayerInput.wk, pkB: LayerInput.bk, pqW: LayerInput.wq, pqB: LayerInput.bq };
  return { pkW: LayerInput.wpk, pkB: LayerInput.bpk, pqW: LayerInput.wpq, pqB: LayerInput.bpq };
}

/** A checkpoint weight the layer graph needs, and how many rows of it one head owns. */
export interface LayerWeight {
  name: string;
  shape: number[];
  rowsPerHead: number;
}

/**
 * The checkpoint weights behind each layer-graph input for layer l (spec §3). Head h owns rows
 * [h·rowsPerHead, (h+1)·rowsPerHead) of each, so a range of heads is a contiguous block of rows.
 */
export function layerWeights(s: ModelSpec, l: number): Partial<Record<LayerInputName, LayerWeight>> {
  const att = `encoder.layer.${l}.attention.self`;
  const D = s.hiddenSize, A = s.allHeadSize, d = s.headDim;
  const { c2p, p2c } = termFlags(s);
  const mat = (name: string, rows = d): LayerWeight => ({ name, shape: [(rows / d) * A, D], rowsPerHead: rows });
  const vec = (name: string): LayerWeight => ({ name, shape: [A], rowsPerHead: d });
  const out: Partial<Record<LayerInputName, LayerWeight>> = {};
  if (s.modelType === 'deberta') {
    out[LayerInput.wqkv] = mat(`${att}.in_proj.weight`, 3 * d);
    out[LayerInput.bq] = vec(`${att}.q_bias`);
    if (c2p) out[LayerInput.wpk] = mat(`${att}.pos_proj.weight`);
    if (p2c) {
      out[LayerInput.wpq] = mat(`${att}.pos_q_proj.weight`);
      out[LayerInput.bpq] = vec(`${att}.pos_q_proj.bias`);
    }
    return out;
  }
  // BERT names its projections query/key (DeBERTa v2/v3 query_proj/key_proj); it has no position projections.
  const proj = s.architecture === 'bert' ? '' : '_proj';
  out[LayerInput.wq] = mat(`${att}.query${proj}.weight`);
  out[LayerInput.bq] = vec(`${att}.query${proj}.bias`);
  out[LayerInput.wk] = mat(`${att}.key${proj}.weight`);
  out[LayerInput.bk] = vec(`${att}.key${proj}.bias`);
  if (!s.shareAttKey) {
    if (c2p) {
      out[LayerInput.wpk] = mat(`${att}.pos_key_proj.weight`);
      out[LayerInput.bpk] = vec(`${att}.pos_key_proj.bias`);
    }
    if (p2c) {
      out[LayerInput.wpq] = mat(`${att}.pos_query_proj.weight`);
      out[LayerInput.bpq] = vec(`${att}.pos_query_proj.bias`);
    }
  }
  return out;
}

/** The checkpoint weights the positions graph projects the relative table with (the content ones when shared). */
export function positionWeightFeeds(s: ModelSpec): LayerInputName[] {
  const { c2p, p2c } = termFlags(s);
  const { pkW, pkB, pqW, pqB } = positionFeeds(s);
  const w = layerWeights(s, 0);
  return [...(c2p ? [pkW, pkB] : []), ...(p2c ? [pqW, pqB] : [])].filter((name, k, all) => w[name] && all.indexOf(name) === k);
}

/** The checkpoint weights the layer graph projects the hidden states with (query and key, or v1's in_proj). */
export function contentWeightFeeds(s: ModelSpec): LayerInputName[] {
  const content: LayerInputName[] = [LayerInput.wq, LayerInput.bq, LayerInput.wk, LayerInput.bk, LayerInput.wqkv];
  return content.filter((name) => layerWeights(s, 0)[name]);
}

/**
 * One layer's attention for a range of heads: inputs `hidden` [n, D], the weight rows of those heads
 * (contentWeightFeeds), their rows of the layer's projected relative table `pos_key`, `pos_query` [h·d, 2S]
 * (buildPositionsGraph), and the picks (rows of the table) and skew inputs; outputs c2c, c2p, p2c, probs as
 * [h, n, n]. The position projections do not depend on the text, so they are computed once per layer and kept.
 */
export function buildLayerGraph(s: ModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const D = s.hiddenSize, d = s.headDim;
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
  for (const kind of ['c2c', 'c2p', 'p2c'] as const) if (terms[kind]) g.output(terms[kind], layerOutput(kind), OnnxType.FLOAT, ['h', 'n', 'n']);
  g.output(probs, layerOutput('probs'), OnnxType.FLOAT, ['h', 'n', 'n']);
  return g;
}

/** Inputs of the positions graph besides the weights of positionWeightFeeds. */
export const PositionsInput = {
  /** The whole relative table `encoder.rel_embeddings.weight` [2S, D]. */
  table: 'rel_table',
  /** v2/v3 with norm_rel_ebd: the table's LayerNorm (`encoder.LayerNorm`). */
  lnWeight: 'rel_ln_weight',
  lnBias: 'rel_ln_bias',
} as const;

/**
 * One layer's position projections of the whole relative table (deberta-spec.md §4: PK and PQ of every row),
 * head-major so that a range of heads is a range of rows: outputs `pos_key` = W_pk·Rᵀ + b_pk and `pos_query` =
 * W_pq·Rᵀ + b_pq, each [A, 2S], with R the table (LayerNorm'd as the forward graph does in v2/v3). They depend on
 * the model and the layer only, never on the text: the runtime computes them once per layer and keeps them.
 */
export function buildPositionsGraph(s: ModelSpec): GraphBuilder {
  const g = new GraphBuilder();
  const D = s.hiddenSize, A = s.allHeadSize, S2 = 2 * s.attSpan;
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
