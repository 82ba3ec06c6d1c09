import type { Checkpoint } from '../checkpoint';
import { activation } from './activation';
import type { TermEdit } from './attention-builder';
import { convBlock, EncoderBuilder } from './deberta-graph';
import { InputName, LayerInput, type LayerInputName, layerWeights, positionFeeds } from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/**
 * Activation patching's graph from layer `start` on: V variants of the corrupted run at once, each putting in its own
 * choice of the clean run's values (the sweep graph's batching: variants' heads stacked on the attention's head axis,
 * V·n rows elsewhere, so one runtime call serves them all). Inputs: `hidden` (the corrupted state entering layer
 * start, [n, D]), `rel`, the pick and skew inputs, `clean` (the clean run's states entering layers start…L−1 and its
 * final state, [Lt+1, n, D]), `resid` [V, Lt+1, n] (1: that row of that state is the clean one), `positions` [k];
 * with `terms`, per site `patch_<site>` [V, Lt, H] (1: that head's c2c / c2p / p2c term, whole score `all` or context
 * vector `out` is the clean run's, which the graph computes from `clean` with the same arithmetic); with `knock`,
 * `knock` [V, Lt, n, n] added to the raw score (0, or −∞ to remove an edge). Output `rows` [V·k, D]: each variant's
 * final state at `positions` (the last layer runs only those rows after its attention). Values are chosen with Where, so a variant that patches nothing runs the corrupted
 * arithmetic exactly and a patched value is the clean one bit for bit.
 * Every architecture the forward graph builds: v1's fused projection, BERT's absolute-only attention, v2's conv block
 * (batched: each variant convolves its own layer-0 input).
 */
export const PATCH_GRAPH_VERSION = 'deberta-lens-patch-3';
export const PatchFeed = {
  clean: 'clean',
  resid: 'resid',
  site: (site: string) => `patch_${site}`,
  knock: 'knock',
  positions: 'positions',
} as const;
export const PATCH_ROWS = 'rows';

export interface PatchGraphOptions {
  start: number;
  /** Head sites can be patched (the clean attention is computed per layer). */
  terms: boolean;
  /** Edges can be knocked out. */
  knock: boolean;
}

export function buildPatchGraph(ck: Checkpoint, o: PatchGraphOptions): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    H = s.numHeads,
    d = s.headDim,
    A = s.allHeadSize,
    Lt = s.numLayers - o.start;
  const enc = new EncoderBuilder(g, ck, H);
  const att = enc.att;
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  // BERT and DeBERTa without relative terms have no relative rows (and no `seq_len` input from the attention builder).
  const rel = att.flags.relative ? g.input(LayerInput.rel, OnnxType.FLOAT, ['u', D]) : undefined;
  const clean = g.input(PatchFeed.clean, OnnxType.FLOAT, [Lt + 1, 'n', D]);
  const resid = g.input(PatchFeed.resid, OnnxType.FLOAT, ['v', Lt + 1, 'n']);
  const kinds = (['c2c', 'c2p', 'p2c'] as const).filter((t) => t === 'c2c' || att.flags[t]);
  const sites = o.terms ? [...kinds, 'all', 'out'] : [];
  const siteIn = new Map(sites.map((t) => [t, g.input(PatchFeed.site(t), OnnxType.FLOAT, ['v', Lt, H])]));
  const knock = o.knock ? g.input(PatchFeed.knock, OnnxType.FLOAT, ['v', Lt, 'n', 'n']) : undefined;
  const positions = g.input(PatchFeed.positions, OnnxType.INT64, ['k']);
  const c = (xs: number[]) => g.constInt64(xs);
  const nVec = rel ? InputName.n : g.node('Slice', [g.node('Shape', [hidden]), c([0]), c([1]), c([0])]);
  const V = g.node('Slice', [g.node('Shape', [resid]), c([0]), c([1]), c([0])]); // [1]
  const shape = (...parts: string[]) => g.node('Concat', parts, { axis: 0 });
  const pick = (x: string, j: number, axis: number) => g.node('Squeeze', [g.node('Gather', [x, c([j])], { axis }), c([axis])]);
  const asBool = (x: string) => g.node('Cast', [x], { to: OnnxType.BOOL });
  // [n, D] → [V·n, D]: every variant starts from the corrupted state.
  let x = g.node('Reshape', [g.node('Expand', [hidden, shape(V, c([1, 1]))]), c([-1, D])]);
  /** The rows of x whose resid mask at state j is set take the clean state's. */
  const putState = (y: string, j: number) => {
    const m = asBool(g.node('Reshape', [pick(resid, j, 1), c([-1, 1])])); // [V·n, 1]
    const cleanRows = g.node('Tile', [pick(clean, j, 0), shape(V, c([1]))]); // [V·n, D]
    return g.node('Where', [m, cleanRows, y]);
  };
  /** [V·n, A] or [V·n, H, d] → [V·H, n, d]: variants' heads stacked. */
  const toBatchHeads = (y: string) =>
    g.node('Reshape', [
      g.node('Transpose', [g.node('Reshape', [y, shape(V, nVec, c([H, d]))])], { perm: [0, 2, 1, 3] }),
      shape(c([-1]), nVec, c([d])),
    ]);
  const tile = (y: string) => g.node('Tile', [y, shape(V, c([1, 1]))]);
  /** Where a site's mask [V, Lt, H] is set at layer j, the clean value [H, ·, ·] (tiled over variants), else y. */
  const putHeads = (site: string, j: number, cleanValue: string, y: string) => {
    const m = asBool(g.node('Reshape', [pick(siteIn.get(site)!, j, 1), c([-1, 1, 1])])); // [V·H, 1, 1]
    return g.node('Where', [m, tile(cleanValue), y]);
  };
  /** [V·n, w] → [V·k, w]: the followed positions' rows of each variant, variant-major. */
  const followed = (y: string, w: number) =>
    g.node('Reshape', [g.node('Gather', [g.node('Reshape', [y, shape(V, nVec, c([w]))]), positions], { axis: 1 }), c([-1, w])]);
  let rowsOnly = false;
  for (let l = o.start; l < s.numLayers; l++) {
    const j = l - o.start;
    x = putState(x, j);
    const layerIn = x;
    const p = `encoder.layer.${l}`;
    const w = layerWeights(s, l);
    const W = (name: LayerInputName) => enc.W(w[name]!.name, w[name]!.shape);
    const linear = (y: string, prefix: string, out: number, inp: number) =>
      att.linear(y, enc.W(`${prefix}.weight`, [out, inp]), enc.W(`${prefix}.bias`, [out]));
    const [q, k, v] = enc.projectQkv(l, x).map(toBatchHeads) as [string, string, string];
    const { pkW, pkB, pqW, pqB } = positionFeeds(s);
    const bias = (name: LayerInputName) => (w[name] ? W(name) : undefined);
    const pk = rel && att.flags.c2p ? att.linear(rel, W(pkW), bias(pkB)) : undefined;
    const pq = rel && att.flags.p2c ? att.linear(rel, W(pqW), bias(pqB)) : undefined;
    // v2's conv block after layer 0 reads the layer's input (each variant's own) with all its rows.
    const conv = l === 0 && s.convKernelSize > 0;
    let edit: TermEdit | undefined;
    let scoreEdit: ((score: string) => string) | undefined;
    let cleanHeads: string | undefined;
    if (o.terms) {
      // The clean run's attention at this layer, one sequence: its terms, raw score and context vectors [H, n, ·].
      const [cq, ck2, cv] = enc.projectQkv(l, pick(clean, j, 0)).map((y) => g.node('Transpose', [y], { perm: [1, 0, 2] })) as [
        string,
        string,
        string,
      ];
      const ct = att.terms(cq, ck2, pk, pq);
      cleanHeads = g.node('MatMul', [ct.probs, cv]);
      edit = (kind, term) => putHeads(kind, j, ct.terms[kind]!, term);
      scoreEdit = (score) => putHeads('all', j, ct.score, score);
    }
    if (knock) {
      const before = scoreEdit;
      const bias4 = g.node('Unsqueeze', [pick(knock, j, 1), c([1])]); // [V, 1, n, n]
      scoreEdit = (score) => {
        const s4 = g.node('Reshape', [before ? before(score) : score, shape(V, c([H]), nVec, nVec)]);
        return g.node('Reshape', [g.node('Add', [s4, bias4]), shape(c([-1]), nVec, nVec)]);
      };
    }
    const { probs } = att.terms(q, k, pk, pq, undefined, edit, tile, scoreEdit);
    let heads = g.node('MatMul', [probs, v]); // [V·H, n, d]
    if (cleanHeads) heads = putHeads('out', j, cleanHeads, heads);
    let ctx = g.node('Reshape', [
      g.node('Transpose', [g.node('Reshape', [heads, shape(V, c([H]), nVec, c([d]))])], { perm: [0, 2, 1, 3] }),
      c([-1, A]),
    ]);
    if (l === s.numLayers - 1 && !conv) {
      // The last layer's keys and values need every row, but what follows the attention is row by row: only the
      // followed rows go on (most of the layer's work when one row is read).
      [ctx, x] = [followed(ctx, A), followed(x, D)];
      rowsOnly = true;
    }
    const attOut = enc.layerNorm(g.node('Add', [linear(ctx, `${p}.attention.output.dense`, D, A), x]), `${p}.attention.output.LayerNorm`);
    const inter = activation(g, linear(attOut, `${p}.intermediate.dense`, s.intermediateSize, D), s.hiddenAct);
    x = enc.layerNorm(g.node('Add', [linear(inter, `${p}.output.dense`, D, s.intermediateSize), attOut]), `${p}.output.LayerNorm`);
    if (conv)
      x = convBlock(
        g,
        (name, dims) => enc.W(name, dims),
        s,
        layerIn,
        x,
        (y, prefix) => enc.layerNorm(y, prefix),
        { n: nVec },
      );
  }
  // The final state's patch, on the followed rows: [V·k, D], variant-major.
  const finalMask = asBool(g.node('Reshape', [g.node('Gather', [pick(resid, Lt, 1), positions], { axis: 1 }), c([-1, 1])])); // [V·k, 1]
  const finalClean = g.node('Tile', [g.node('Gather', [pick(clean, Lt, 0), positions], { axis: 0 }), shape(V, c([1]))]); // [V·k, D]
  const rows = g.node('Where', [finalMask, finalClean, rowsOnly ? x : followed(x, D)]);
  g.output(rows, PATCH_ROWS, OnnxType.FLOAT, ['r', D]);
  return g;
}
