// How much of each attention score comes from content (c2c) and how much from position (c2p, p2c).
//
// Rule (per cell, per head): share_t = |t| / (|c2c| + |c2p| + |p2c|) over the terms the model has (BERT's layer-0
// split adds p2p and rest, which enter the sum the same way). Magnitudes,
// not signed values, because terms of opposite sign cancel in the score yet both shape it. The content share is
// share_c2c; the positional share is 1 − content. A cell where every term is exactly 0 splits equally among the
// present terms, so shares always sum to 1. A head's share is the mean over its cells, either uniform (every
// cell counts the same) or weighted by the real attention probabilities (cells the head actually uses count).
import { DECOMPOSITION_TERMS, type DecompositionTerm } from '../shared/kinds';
import { first } from '../shared/checked';
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import { blockCount, sameLength } from './matrix';

/** A term whose share is taken: DeBERTa's three, and BERT's layer-0 p2p and rest (token type, LayerNorm shift, biases). */
export type ShareTerm = DecompositionTerm;
/** Every share term, in the order tables list them (DeBERTa's three are the first three). */
export const SHARE_TERMS: readonly ShareTerm[] = DECOMPOSITION_TERMS;

/** Raw terms for one head `[n,n]` or one layer `[H,n,n]`; c2p/p2c absent when the model lacks them. */
export interface TermSet {
  c2c: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  p2p?: Float32Array;
  rest?: Float32Array;
}

/** Share of each present term per cell, same shape as the input; absent terms stay absent. */
export interface CellShares {
  c2c: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  p2p?: Float32Array;
  rest?: Float32Array;
}

export type ShareWeighting = 'uniform' | 'probs';
export type HeadLabel = 'content' | 'positional' | 'mixed';

/** A head is 'content' when its content share ≥ content, 'positional' when ≤ positional, else 'mixed'. */
export interface LabelThresholds {
  content: number;
  positional: number;
}
export const DEFAULT_THRESHOLDS: LabelThresholds = { content: 0.6, positional: 0.4 };

function presentTerms(t: TermSet): [ShareTerm, Float32Array][] {
  return SHARE_TERMS.flatMap((name): [ShareTerm, Float32Array][] => (t[name] ? [[name, t[name]]] : []));
}

export function cellShares(terms: TermSet): CellShares {
  const present = presentTerms(terms);
  sameLength(
    present.map(([, m]) => m),
    'term matrices',
  );
  const len = terms.c2c.length;
  const shares = present.map(([name, m]) => ({ name, m, share: new Float32Array(len) }));
  for (let k = 0; k < len; k++) {
    let total = 0;
    for (const { m } of shares) total += Math.abs(m[k]!);
    for (const s of shares) s.share[k] = total > 0 ? Math.abs(s.m[k]!) / total : 1 / shares.length;
  }
  // c2c is always present, and first.
  const out: CellShares = { c2c: first(shares, 'the present terms').share };
  for (const { name, share } of shares) out[name] = share;
  return out;
}

/** Per-head mean shares: `[H]` arrays (H = number of `[n,n]` blocks). `probs` is required for 'probs' weighting. */
export function headShares(terms: TermSet, n: number, weighting: ShareWeighting = 'uniform', probs?: Float32Array): CellShares {
  const heads = blockCount(terms.c2c, n, 'c2c');
  if (weighting === 'probs') {
    if (!probs) throw new LensError("analysis: 'probs' weighting needs the probs matrix; pass it or use 'uniform'");
    sameLength([terms.c2c, probs], 'terms and probs');
  }
  const cells = cellShares(terms);
  const nn = n * n;
  const reduce = (m: Float32Array): Float32Array => {
    const out = new Float32Array(heads);
    for (let h = 0; h < heads; h++) {
      let acc = 0;
      let wsum = 0;
      for (let k = h * nn; k < (h + 1) * nn; k++) {
        const w = weighting === 'probs' ? probs![k]! : 1;
        acc += w * m[k]!;
        wsum += w;
      }
      out[h] = wsum > 0 ? acc / wsum : 0;
    }
    return out;
  };
  const out: CellShares = { c2c: reduce(cells.c2c) };
  for (const name of SHARE_TERMS) {
    const m = cells[name];
    if (name !== 'c2c' && m) out[name] = reduce(m);
  }
  return out;
}

export function labelHead(contentShare: number, thresholds: LabelThresholds = DEFAULT_THRESHOLDS): HeadLabel {
  if (contentShare >= thresholds.content) return 'content';
  if (contentShare <= thresholds.positional) return 'positional';
  return 'mixed';
}

/** Layer × head grid of shares and labels; flat arrays indexed `[layerIndex * heads + head]`. */
export interface ShareGrid {
  layers: number[];
  heads: number;
  weighting: ShareWeighting;
  content: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  labels: HeadLabel[];
}

/** Streams over the layers: one layer's matrices in memory at a time. */
export async function termShareGrid(
  result: ExplainResult,
  opts: { layers?: number[]; weighting?: ShareWeighting; thresholds?: LabelThresholds } = {},
): Promise<ShareGrid> {
  const layers = opts.layers ?? result.layers;
  const weighting = opts.weighting ?? 'uniform';
  const H = result.heads;
  const grid: ShareGrid = { layers, heads: H, weighting, content: new Float32Array(layers.length * H), labels: [] };
  if (result.has('c2p')) grid.c2p = new Float32Array(layers.length * H);
  if (result.has('p2c')) grid.p2c = new Float32Array(layers.length * H);
  for (const [li, layer] of layers.entries()) {
    await result.load(layer);
    const s = headShares(layerTerms(result, layer), result.n, weighting, result.tensor(layer, 'probs'));
    grid.content.set(s.c2c, li * H);
    if (grid.c2p && s.c2p) grid.c2p.set(s.c2p, li * H);
    if (grid.p2c && s.p2c) grid.p2c.set(s.p2c, li * H);
    for (let h = 0; h < H; h++) grid.labels.push(labelHead(s.c2c[h]!, opts.thresholds));
  }
  return grid;
}

/** The raw terms of one loaded layer `[H,n,n]` as a TermSet (views, not copies). */
export function layerTerms(result: ExplainResult, layer: number): TermSet {
  const t: TermSet = { c2c: result.tensor(layer, 'c2c') };
  if (result.has('c2p')) t.c2p = result.tensor(layer, 'c2p');
  if (result.has('p2c')) t.p2c = result.tensor(layer, 'p2c');
  return t;
}
