// The names and weights of the encoder graphs' inputs and outputs (./deberta-graph.ts, ./layer-graphs.ts): what
// the runtime feeds and fetches by name, and which checkpoint weights stand behind each one-layer input. Shared
// by the graph builders and the run/ code that feeds them; no graph is built here.
import type { ModelSpec, TermName } from '../types';

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
export function termFlags(s: ModelSpec) {
  const relative = s.relativeAttention && s.posAttType.length > 0;
  return { relative, c2p: relative && s.posAttType.includes('c2p'), p2c: relative && s.posAttType.includes('p2c') };
}

/** s = √(d·sf), evaluated in float32 as HF does. */
export function scaleOf(s: ModelSpec): number {
  return Math.fround(Math.sqrt(Math.fround(s.headDim * s.scaleFactor)));
}

/** Inputs of the tail graph besides `hidden`, `rel` and the pick and skew inputs. */
export const TailInput = {
  /** Per term: [layers from the start layer on, heads] multipliers of the raw term; 1 keeps it. */
  keep: (t: TermName) => `keep_${t}`,
  /** [1]: 0 = a removed term becomes 0; 1 = it becomes its mean over key positions (per query row). */
  mean: 'ablate_mean',
} as const;

/** Inputs of the positions graph besides the weights of positionWeightFeeds. */
export const PositionsInput = {
  /** The whole relative table `encoder.rel_embeddings.weight` [2S, D]. */
  table: 'rel_table',
  /** v2/v3 with norm_rel_ebd: the table's LayerNorm (`encoder.LayerNorm`). */
  lnWeight: 'rel_ln_weight',
  lnBias: 'rel_ln_bias',
} as const;

/** Feed names of the position projections: the content projections when the model shares them. */
export function positionFeeds(s: ModelSpec): { pkW: LayerInputName; pkB: LayerInputName; pqW: LayerInputName; pqB: LayerInputName } {
  if (s.modelType === 'deberta-v2' && s.shareAttKey)
    return { pkW: LayerInput.wk, pkB: LayerInput.bk, pqW: LayerInput.wq, pqB: LayerInput.bq };
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
  const D = s.hiddenSize,
    A = s.allHeadSize,
    d = s.headDim;
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
