// What the heatmap asks the host for, and in what order it fetches ahead. Heatmap matrices come in half
// precision (they are only painted; every number the readout shows comes from a float32 row), and the matrix a
// reader is most likely to step to next is fetched as soon as the current one is painted. Pure: no DOM.
import { decodeHalf } from '../../../src/shared/half';
import type { MatrixKind } from '../../../src/shared/kinds';
import {
  fromBuffer,
  type PictureRequest,
  type ScalingName,
  type SliceRequest,
  type SliceResponse,
} from '../../../src/shared/protocol/lens';

/** A heatmap's matrix: half precision. (Compare Heads' panes show numbers and ask for float32.) */
export function paintRequest(layer: number, head: number, kind: MatrixKind): SliceRequest {
  return { type: 'slice', layer, head, kind, precision: 'half' };
}

/** What a view fetches for one (layer, head, kind): a half slice, or a picture at a chosen side and scaling. */
export type MatrixRequestMaker = (layer: number, head: number, kind: MatrixKind) => SliceRequest | PictureRequest;

/** Pictures of `side` pixels under `scaling`: the heatmap of a long input, fetched ahead the same way. */
export function pictureRequests(scaling: ScalingName, side: number): (layer: number, head: number, kind: MatrixKind) => PictureRequest {
  return (layer, head, kind) => ({ type: 'picture', layer, head, kind, scaling, side });
}

/** The float values of a slice response, whichever encoding it came in. */
export function sliceValues(r: SliceResponse): Float32Array {
  return r.encoding === 'half' ? decodeHalf(r.data, r.n * r.n) : fromBuffer(r.data, r.n * r.n);
}

export interface At {
  layer: number;
  head: number;
  term: MatrixKind;
}

/**
 * The matrices to fetch ahead from `at`, most likely first: one more step the way the reader last moved (from
 * `prev`), then the next and previous head, the next term and the next layer. Duplicates and `at` itself are
 * left out.
 */
export function prefetchPlan(
  at: At,
  prev: At | undefined,
  kinds: readonly MatrixKind[],
  layers: readonly number[],
  heads: number,
  make: MatrixRequestMaker = paintRequest,
): (SliceRequest | PictureRequest)[] {
  const wrap = (k: number, n: number) => ((k % n) + n) % n;
  const li = layers.indexOf(at.layer);
  const ti = kinds.indexOf(at.term);
  const head = (d: number) => make(at.layer, wrap(at.head + d, heads), at.term);
  const term = (d: number) => {
    const kind = ti >= 0 ? kinds[wrap(ti + d, kinds.length)] : undefined;
    return kind === undefined ? undefined : make(at.layer, at.head, kind);
  };
  const layer = (d: number) => {
    const l = li >= 0 ? layers[wrap(li + d, layers.length)] : undefined;
    return l === undefined ? undefined : make(l, at.head, at.term);
  };
  const plan: (SliceRequest | PictureRequest | undefined)[] = [];
  if (prev) {
    const dir = (a: number, b: number, n: number) => (wrap(a - b, n) === 1 ? 1 : wrap(b - a, n) === 1 ? -1 : a > b ? 1 : -1);
    if (prev.head !== at.head && prev.layer === at.layer && prev.term === at.term) plan.push(head(dir(at.head, prev.head, heads)));
    else if (prev.term !== at.term && prev.layer === at.layer && prev.head === at.head && ti >= 0)
      plan.push(term(dir(ti, kinds.indexOf(prev.term), kinds.length)));
    else if (prev.layer !== at.layer && prev.head === at.head && prev.term === at.term && li >= 0)
      plan.push(layer(dir(li, layers.indexOf(prev.layer), layers.length)));
  }
  plan.push(head(1), term(1), head(-1), layer(1));
  const seen = new Set([JSON.stringify(make(at.layer, at.head, at.term))]);
  const out: (SliceRequest | PictureRequest)[] = [];
  for (const r of plan) {
    if (!r) continue;
    const k = JSON.stringify(r);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(r);
  }
  return out;
}
