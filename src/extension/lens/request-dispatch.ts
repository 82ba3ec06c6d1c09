// Answers the webview's matrix requests from the ExplainResult the host keeps: routes each request to the module
// that builds its response. Pure (no `vscode`), so the unit tests run it against real results. A request for a
// layer that is not computed yet waits for the one-layer run.
import type { ExplainResult } from '../../engine';
import type { PositionSpec } from '../../analysis';
import { dispatchRequest, type RequestHandlers } from '../../shared/messaging/message-handler';
import type { LensRequests, RequestBody, ResponseBody } from '../../shared/protocol/lens';
import { ablation, aggregated, buckets, diff, distance, rollout, shares, words } from './analysis-requests';
import { heads, overview, picture, row, slice, tops } from './layer-requests';
import { emdQuery, type EmdView } from './emd-passes';

/** What the host knows beside the result: the model's relative-position geometry (for the bucket lens). */
export interface AnswerContext {
  positions?: PositionSpec;
  /** The result the panel showed before this one (the Diff view compares against it). */
  previous?: ExplainResult;
  /** The Enhanced Mask Decoder's passes, when the result shows them: requests for their layers answer from them. */
  emd?: { layers: readonly number[]; view: () => Promise<EmdView> };
}

/** The layer a request reads, when it reads one layer. */
export function layerOf(body: RequestBody): number | undefined {
  return 'layer' in body && typeof body.layer === 'number' ? body.layer : undefined;
}

/** The layer each result was last asked for, to tell which way the reader is stepping. */
const lastLayer = new WeakMap<ExplainResult, number>();

/**
 * After the view has read layer l, compute the layer a reader goes to next while the user looks (l + 1, or l − 1
 * when stepping down), so that stepping through layers shows each at once. One layer only: runs queue behind it,
 * so a second prefetch would delay a jump elsewhere. The result skips it when the layer would not fit the cache.
 */
export function prefetchAround(result: ExplainResult, layer: number): void {
  const last = lastLayer.get(result);
  lastLayer.set(result, layer);
  // Answered from the explain's preview, the layer itself is not computed yet: it comes first, with the view's
  // next request for it (a neighbour computed now would take the cores while the page paints its first heatmap).
  if (result.previewAt?.layer === layer && !result.isLoaded(layer)) return;
  result.prefetch(last !== undefined && layer < last ? layer - 1 : layer + 1);
}

/** Each request's answer from one result, typed by the protocol's map (a request left out does not compile). */
function answersFrom(result: ExplainResult, ctx: AnswerContext): RequestHandlers<LensRequests> {
  return {
    words: (body) => words(result, body),
    diff: (body) => diff(result, ctx.previous, body),
    aggregate: (body) => aggregated(result, body),
    shares: (body) => shares(result, body.weighting),
    ablation: (body) => ablation(result, body.layer, body.head, body.preset),
    distance: (body) => distance(result, body.layer, body.head, body.query),
    buckets: () => buckets(result, ctx.positions),
    rollout: (body) => rollout(result, body.preset),
    slice: (body) => slice(result, body.layer, body.head, body.kind, body.precision),
    picture: (body) => picture(result, body),
    tops: (body) => tops(result, body),
    heads: (body) => heads(result, body.layer, body.kind, body.maxSize),
    overview: (body) => overview(result, body.kind),
    row: (body) => row(result, body.layer, body.head, body.i),
    emdQuery: async () => {
      if (!ctx.emd) throw new Error(`${result.model.name} shows no Enhanced Mask Decoder passes for this text`);
      return emdQuery((await ctx.emd.view()).raw);
    },
  };
}

/** Rejects with a one-line Error for a request the result cannot answer (the webview shows it). */
export async function answerRequest(result: ExplainResult, body: RequestBody, ctx: AnswerContext = {}): Promise<ResponseBody> {
  result.busy();
  // A layer of the EMD's passes: the same answers, from the passes' own result (its layers are their picker ids).
  const layer = layerOf(body);
  if (layer !== undefined && ctx.emd?.layers.includes(layer)) {
    const passes = (await ctx.emd.view()).result;
    return dispatchRequest(answersFrom(passes, { ...ctx, previous: undefined }), body.type, body, undefined);
  }
  return dispatchRequest(answersFrom(result, ctx), body.type, body, undefined);
}
