// Responses built from one layer's matrices (slice, heads grid, hover row) and the layer × head overview, which
// streams over the layers and keeps one number per head.
import type { ExplainResult, MatrixKind } from '../../engine';
import {
  toBuffer,
  type PictureRequest,
  type PictureResponse,
  type TopsRequest,
  type TopsResponse,
  type HeadsResponse,
  type OverviewResponse,
  type RowResponse,
  type SliceResponse,
} from '../../shared/protocol/lens';
import { downsampleInto, meanAbs, meanRowEntropy } from './matrix-math';
import { encodeHalf } from '../../shared/half';
import { finiteExtent } from '../../shared/value-range';
import { pooledSteps } from '../../shared/heatmap-picture';
import { rowTops } from '../../shared/hover';
import { isSignedKind } from '../../shared/kinds';
import { memo } from './result-memo';
import { availableKinds, check } from '../common/result-shape';

export async function slice(
  result: ExplainResult,
  layer: number,
  head: number,
  kind: MatrixKind,
  precision?: 'half',
): Promise<SliceResponse> {
  const values = await headValues(result, layer, head, kind);
  if (precision === 'half') return halfSlice(layer, head, kind, result.n, values);
  return { type: 'slice', layer, head, kind, n: result.n, data: toBuffer(values) };
}

/**
 * One head's `[n, n]` matrix of `kind`, checked. The head on screen first: a layer not yet computed gives this head
 * as soon as it is there (or the preview the explain computed with its forward pass); the other heads follow into
 * the cache.
 */
async function headValues(result: ExplainResult, layer: number, head: number, kind: MatrixKind): Promise<Float32Array> {
  check(result, layer, head, kind);
  await result.loadHead(layer, head, undefined, kind);
  return result.headSlice(layer, head, kind) ?? (await result.load(layer), result.slice(layer, head, kind));
}

/** One head's map as steps pooled to the screen's side (the heatmap of a long input: see heatmap-picture.ts). */
export async function picture(result: ExplainResult, body: PictureRequest): Promise<PictureResponse> {
  const { layer, head, kind, scaling } = body;
  const values = await headValues(result, layer, head, kind);
  const n = result.n;
  const { side, steps, range, pooling } = pooledSteps(values, n, isSignedKind(kind), scaling, Math.min(n, body.side));
  return { type: 'picture', layer, head, kind, n, side, data: steps.buffer as ArrayBuffer, range, pooling };
}

/** Each query row's hover neighbours in one head, for a view that shows the head as a picture. */
export async function tops(result: ExplainResult, body: TopsRequest): Promise<TopsResponse> {
  const { layer, head, kind } = body;
  const values = await headValues(result, layer, head, kind);
  const { m, idx, val } = rowTops(values, result.n, kind, body.k);
  return { type: 'tops', layer, head, kind, n: result.n, m, idx: idx.buffer as ArrayBuffer, val: val.buffer as ArrayBuffer };
}

/** A slice response in half precision, with the finite extent of the full-precision values. */
export function halfSlice(layer: number, head: number, kind: MatrixKind, n: number, values: Float32Array): SliceResponse {
  return { type: 'slice', layer, head, kind, n, data: encodeHalf(values), encoding: 'half', extent: finiteExtent(values) };
}

export async function heads(result: ExplainResult, layer: number, kind: MatrixKind, maxSize: number): Promise<HeadsResponse> {
  check(result, layer, undefined, kind);
  await result.load(layer);
  const n = result.n;
  const size = Math.min(n, Math.max(1, Math.floor(maxSize)));
  const out = new Float32Array(result.heads * size * size);
  for (let h = 0; h < result.heads; h++) {
    downsampleInto(result.slice(layer, h, kind), n, size, out.subarray(h * size * size, (h + 1) * size * size));
  }
  return { type: 'heads', layer, kind, heads: result.heads, size, data: out.buffer };
}

export async function overview(result: ExplainResult, kind: MatrixKind): Promise<OverviewResponse> {
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
  const metric = kind === 'probs' ? 'entropy' : 'mean-abs';
  const data = await memo(result, `overview/${kind}`, async () => {
    const H = result.heads;
    const n = result.n;
    const out = new Float32Array(result.layers.length * H);
    let li = 0;
    for await (const layer of result.stream()) {
      for (let h = 0; h < H; h++) {
        const s = result.slice(layer, h, kind);
        out[li * H + h] = metric === 'entropy' ? meanRowEntropy(s, n) : meanAbs(s);
      }
      li++;
    }
    return out;
  });
  return { type: 'overview', kind, metric, layers: result.layers, heads: result.heads, data: toBuffer(data) };
}

export async function row(result: ExplainResult, layer: number, head: number, i: number): Promise<RowResponse> {
  check(result, layer, head, 'probs');
  const n = result.n;
  if (i < 0 || i >= n) throw new Error(`token ${i} is out of range`);
  await result.loadHead(layer, head);
  if (!result.headSlice(layer, head, 'probs')) await result.load(layer);
  const rows: RowResponse['rows'] = {};
  for (const kind of availableKinds(result)) {
    const values = result.headSlice(layer, head, kind) ?? result.slice(layer, head, kind);
    rows[kind] = toBuffer(values.subarray(i * n, (i + 1) * n));
  }
  return { type: 'row', layer, head, i, n, rows };
}
