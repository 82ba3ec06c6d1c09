// The Model view's geometry: every layer × head thumbnail in a grid (rows: layers, columns: heads), which layer
// rows are on screen, which thumbnail is under the pointer, and the order layers are fetched in. Pure: no DOM.

export interface GridGeometry {
  layers: number;
  heads: number;
  /** Thumbnail side in CSS px. */
  thumb: number;
  gap: number;
  /** Width of the layer labels at the left and height of the head labels on top. */
  labelW: number;
  labelH: number;
  width: number;
  height: number;
}

export const MIN_THUMB = 28;
export const MAX_THUMB = 112;

/** The grid that fits `avail` CSS px across: thumbnails as large as fit (MIN_THUMB … MAX_THUMB), gap ~1/8 of one. */
export function gridGeometry(layers: number, heads: number, avail: number, labelW = 36, labelH = 18): GridGeometry {
  const per = heads > 0 ? (avail - labelW) / heads : MAX_THUMB;
  const gap = Math.max(2, Math.min(8, Math.round(per / 9)));
  const thumb = Math.max(MIN_THUMB, Math.min(MAX_THUMB, Math.floor(per - gap)));
  return {
    layers,
    heads,
    thumb,
    gap,
    labelW,
    labelH,
    width: labelW + heads * (thumb + gap),
    height: labelH + layers * (thumb + gap),
  };
}

/** Top-left corner of the thumbnail of layer row li, head h, in content coordinates. */
export function thumbOrigin(g: GridGeometry, li: number, h: number): { x: number; y: number } {
  return { x: g.labelW + h * (g.thumb + g.gap), y: g.labelH + li * (g.thumb + g.gap) };
}

/** The layer row and head under content point (x, y); undefined in a gap, the labels or outside. */
export function thumbAt(g: GridGeometry, x: number, y: number): { li: number; h: number } | undefined {
  const step = g.thumb + g.gap;
  const cx = x - g.labelW;
  const cy = y - g.labelH;
  if (cx < 0 || cy < 0) return undefined;
  const h = Math.floor(cx / step);
  const li = Math.floor(cy / step);
  if (h >= g.heads || li >= g.layers) return undefined;
  if (cx - h * step >= g.thumb || cy - li * step >= g.thumb) return undefined;
  return { li, h };
}

/** Layer rows [first, last) at least partly inside a viewport of `height` at `scrollTop`, plus `overscan` rows. */
export function visibleLayers(g: GridGeometry, scrollTop: number, height: number, overscan = 1): { first: number; last: number } {
  const step = g.thumb + g.gap;
  const first = Math.floor((scrollTop - g.labelH) / step) - overscan;
  const last = Math.ceil((scrollTop + height - g.labelH) / step) + overscan;
  return { first: Math.max(0, Math.min(g.layers, first)), last: Math.max(0, Math.min(g.layers, last)) };
}

/**
 * The next layer row to fetch: the first on screen not yet loaded nor in flight, nearest the current layer's row
 * first (the reader looks there), else undefined. Rows off screen wait until they scroll in.
 */
export function nextToFetch(win: { first: number; last: number }, has: (li: number) => boolean, current: number): number | undefined {
  let best: number | undefined;
  for (let li = win.first; li < win.last; li++) {
    if (has(li)) continue;
    if (best === undefined || Math.abs(li - current) < Math.abs(best - current)) best = li;
  }
  return best;
}

/** Thumbnail resolution (cells a side) asked of the host: the thumbnail's device pixels, at most the tokens and 64. */
export function thumbCells(thumbCss: number, dpr: number, n: number): number {
  return Math.max(1, Math.min(n, 64, Math.round(thumbCss * Math.max(1, dpr))));
}
