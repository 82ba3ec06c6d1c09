// Zoom and pan of a square matrix view, as pure arithmetic: which rows/columns are on screen, the cell under a
// point, and how wheel and key steps move the window. The heatmap component owns the DOM; this owns the numbers.

export interface Viewport {
  /** Matrix side (rows = columns = n). */
  n: number;
  /** Rows/columns on screen (1..n). */
  span: number;
  /** First row and column on screen. */
  r0: number;
  c0: number;
}

export const ZOOM_STEP = 1.5;
/** Never zoom past this many cells across: a few cells fill the view and labels are large. */
const MIN_SPAN = 4;

export function fit(n: number): Viewport {
  return { n, span: Math.max(1, n), r0: 0, c0: 0 };
}

function clampTo(v: Viewport): Viewport {
  const span = Math.max(Math.min(MIN_SPAN, v.n), Math.min(v.n, Math.round(v.span)));
  const max = v.n - span;
  return { n: v.n, span, r0: Math.max(0, Math.min(max, Math.round(v.r0))), c0: Math.max(0, Math.min(max, Math.round(v.c0))) };
}

/** Zooms by `factor` (> 1 = in) keeping the cell at fractional position (fx, fy) of the view under the pointer. */
export function zoomAt(v: Viewport, factor: number, fx = 0.5, fy = 0.5): Viewport {
  const span = Math.max(Math.min(MIN_SPAN, v.n), Math.min(v.n, Math.round(v.span / factor)));
  const col = v.c0 + fx * v.span;
  const row = v.r0 + fy * v.span;
  return clampTo({ n: v.n, span, c0: col - fx * span, r0: row - fy * span });
}

export function pan(v: Viewport, dRows: number, dCols: number): Viewport {
  return clampTo({ ...v, r0: v.r0 + dRows, c0: v.c0 + dCols });
}

/** Moves the window the least so that cell (i, j) is on screen. */
export function reveal(v: Viewport, i: number, j: number | null): Viewport {
  const into = (start: number, k: number) => (k < start ? k : k >= start + v.span ? k - v.span + 1 : start);
  return clampTo({ ...v, r0: into(v.r0, i), c0: j === null ? v.c0 : into(v.c0, j) });
}

/** Centres the window on a matrix cell (minimap clicks). */
export function centreOn(v: Viewport, i: number, j: number): Viewport {
  return clampTo({ ...v, r0: i - v.span / 2, c0: j - v.span / 2 });
}

/** The cell (i = row/query, j = column/key) under a point of a `size`-pixel view, or null outside. */
export function cellIn(v: Viewport, x: number, y: number, size: number): { i: number; j: number } | null {
  if (size <= 0 || x < 0 || y < 0 || x >= size || y >= size) return null;
  const cell = size / v.span;
  return { i: Math.min(v.n - 1, v.r0 + Math.floor(y / cell)), j: Math.min(v.n - 1, v.c0 + Math.floor(x / cell)) };
}

/** Every how many rows an axis label fits when each row is `cellPx` tall and a label needs `labelPx`. */
export function labelStride(cellPx: number, labelPx = 11): number {
  return cellPx >= labelPx ? 1 : Math.ceil(labelPx / Math.max(cellPx, 1e-3));
}
