// The Enhanced Mask Decoder's two passes for the panel: computed once per result when the view first asks for an
// EMD layer (one more forward pass and the passes graph, model.emdPasses), then kept as a small ExplainResult whose
// layers are the passes' picker ids, so every one-layer request (slice, heads, row, aggregate, words, distance,
// ablation) answers from it with the encoder layers' code.
import { ExplainResult, type EmdPassesResult, type ExplainInput, type LensModel, type ModelSummary } from '../../engine';
import { emdShape, queryPositionShare, type EmdShape } from '../../shared/emd-layers';
import { toBuffer, type EmdQueryResponse } from '../../shared/protocol/lens';

/** Where the EMD passes sit in the pickers for this model, or undefined when it has no passes to show. */
export function emdShapeOf(summary: Pick<ModelSummary, 'layers' | 'emd' | 'emd_rows'>, n: number): EmdShape | undefined {
  if (summary.emd !== 'passes' || summary.emd_rows === undefined || n > summary.emd_rows) return undefined;
  return emdShape(summary.layers, summary.emd_rows);
}

/** The input that gives `result`'s tokens again (a sentence pair with its token types). */
export function inputOf(result: ExplainResult): ExplainInput {
  return result.pair !== undefined && result.text !== undefined
    ? { text: result.text, pair: result.pair, ...(result.pairOffset !== undefined ? { pairOffset: result.pairOffset } : {}) }
    : { ids: result.inputIds };
}

/** The passes of one result as the panel reads them. */
export interface EmdView {
  shape: EmdShape;
  /** Layers `shape.layers`: each pass's c2c / c2p / p2c / probs (scores follow as for any layer). */
  result: ExplainResult;
  raw: EmdPassesResult;
}

/** The passes as an ExplainResult whose two layers are the picker ids. */
export function emdResult(raw: EmdPassesResult, shape: EmdShape): ExplainResult {
  const layers = raw.passes.map((p, k) => ({
    layer: shape.layers[k]!,
    c2c: p.c2c,
    ...(p.c2p ? { c2p: p.c2p } : {}),
    ...(p.p2c ? { p2c: p.p2c } : {}),
    probs: p.probs,
  }));
  return new ExplainResult(raw.model, raw.input_ids, raw.tokens, raw.scale, layers);
}

/** The first pass's query split into content and position, per token (shared/emd-layers.ts's definition). */
export function emdQuery(raw: EmdPassesResult): EmdQueryResponse {
  const n = raw.input_ids.length;
  const q = queryPositionShare(raw.kv_hidden, raw.position, n, raw.hidden_size);
  return {
    type: 'emdQuery',
    n,
    share: toBuffer(Float32Array.from(q.share)),
    contentNorm: toBuffer(Float32Array.from(q.contentNorm)),
    positionNorm: toBuffer(Float32Array.from(q.positionNorm)),
  };
}

const views = new WeakMap<ExplainResult, Promise<EmdView>>();

/** The EMD passes of `result` (computed on first use, then kept with the result). */
export function emdViewOf(model: LensModel, result: ExplainResult, shape: EmdShape): Promise<EmdView> {
  let v = views.get(result);
  if (!v) {
    v = model.emdPasses(inputOf(result)).then((raw) => ({ shape, raw, result: emdResult(raw, shape) }));
    v.catch(() => views.get(result) === v && views.delete(result));
    views.set(result, v);
  }
  return v;
}
