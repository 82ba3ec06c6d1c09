// The Line view's arithmetic: which rows are on screen (virtual window), each line's opacity from its weight,
// the lines to draw grouped by opacity level (one canvas path per level), and the row under the pointer. Pure: no
// DOM, so the unit tests run it under node.

/** Rows [first, last) drawn for a scroll position: the ones on screen and `overscan` more each side. */
export interface RowWindow {
  first: number;
  last: number;
}

/** Vertical layout of the two columns: row k's centre is at pad + (k + 0.5) · rowH in content coordinates. */
export interface LineLayout {
  n: number;
  rowH: number;
  pad: number;
}

/** Height of the whole (scrolled) content. */
export function contentHeight(l: LineLayout): number {
  return l.pad * 2 + l.n * l.rowH;
}

/** Centre of row k in content coordinates. */
export function rowCentre(l: LineLayout, k: number): number {
  return l.pad + (k + 0.5) * l.rowH;
}

/** The rows a viewport of `height` at `scrollTop` shows, widened by `overscan` rows each side and clamped. */
export function visibleWindow(l: LineLayout, scrollTop: number, height: number, overscan = 2): RowWindow {
  if (l.n <= 0 || l.rowH <= 0) return { first: 0, last: 0 };
  const first = Math.floor((scrollTop - l.pad) / l.rowH) - overscan;
  const last = Math.ceil((scrollTop + height - l.pad) / l.rowH) + overscan;
  return { first: Math.max(0, Math.min(l.n, first)), last: Math.max(0, Math.min(l.n, last)) };
}

/** The row at content height y (undefined between rows' ends and the padding). */
export function rowAt(l: LineLayout, y: number): number | undefined {
  const k = Math.floor((y - l.pad) / l.rowH);
  return k >= 0 && k < l.n ? k : undefined;
}

/**
 * How a value becomes a line's opacity. Probabilities are their own opacity (bertviz's rule: 0.3 is twice as
 * opaque as 0.15 at every length, nothing saturates). A signed term has no such unit: |v| over a robust limit
 * `max` (its 99th percentile of |v|), clipped at 1; the sign picks the colour.
 */
export interface OpacityScale {
  signed: boolean;
  max: number;
  /**
   * Set: each line relative to its query's largest (|value|) in the row instead, so a row of weights all under
   * 2% (a spread-out head at 500 tokens) still shows their order. The row's strongest key is opaque.
   */
  rowMax?: Float32Array;
}

/** Opacity of the line from query i with value v. */
export function lineAlpha(v: number, s: OpacityScale, i = 0): number {
  if (!Number.isFinite(v)) return 0;
  if (s.rowMax) {
    const m = s.rowMax[i] ?? 0;
    return m > 0 ? Math.max(0, Math.min(1, (s.signed ? Math.abs(v) : v) / m)) : 0;
  }
  if (!s.signed) return Math.max(0, Math.min(1, v));
  return s.max > 0 ? Math.min(1, Math.abs(v) / s.max) : 0;
}

/** Each row's largest value (|value| for a signed term): the divisor of the relative opacity. */
export function rowMaxima(values: Float32Array, n: number, signed: boolean): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let m = 0;
    for (let j = 0; j < n; j++) {
      const v = values[i * n + j] ?? NaN;
      const a = signed ? Math.abs(v) : v;
      if (a > m && Number.isFinite(a)) m = a;
    }
    out[i] = m;
  }
  return out;
}

/** Opacity levels: lines are batched into one path per level (and sign), so a repaint is a few dozen strokes. */
export const ALPHA_LEVELS = 32;
/** Lines fainter than this are not drawn (invisible on screen; at 500 tokens most of a probs row is below it). */
export const MIN_ALPHA = 0.02;

/** The level an opacity is drawn at (0 … ALPHA_LEVELS − 1), or −1 when it is too faint to draw. */
export function alphaLevel(a: number): number {
  if (!(a >= MIN_ALPHA)) return -1;
  return Math.min(ALPHA_LEVELS - 1, Math.floor(a * ALPHA_LEVELS));
}

/** The opacity a level is painted with: its upper end, so a weight of 1 is fully opaque. */
export function levelAlpha(level: number): number {
  return (level + 1) / ALPHA_LEVELS;
}

/** A hovered word: its row of lines (a query, left) or its column (a key, right). */
export interface Focus {
  side: 'query' | 'key';
  k: number;
}

/**
 * Without a focus, each word in view shows at most its this many strongest lines: a signed term has hundreds of
 * visible lines per word at 500 tokens (a wash, and 50k strokes); a probs row rarely has this many above 2%.
 */
export const MAX_LINES_PER_WORD = 40;
/** A signed term's lines are mostly strong (|v| near its robust max): only the few strongest per word read. */
export const SIGNED_LINES_PER_WORD = 8;

/**
 * How many lines each word in view shows before it is hovered: few where most lines are strong (a signed term,
 * or opacity relative to each row's max), more for probabilities as weights (most of a row is under 2%).
 */
export function linesPerWord(dense: boolean): number {
  return dense ? SIGNED_LINES_PER_WORD : MAX_LINES_PER_WORD;
}

/**
 * The lines to draw, as (query, key) index pairs per level and sign: `[level][sign]` with sign 0 for v ≥ 0 and 1
 * for v < 0. Without a focus: each query row in the window to its strongest keys, and each key in the window
 * from its strongest queries off screen (a line to a word off screen leaves the view the way it goes), at most
 * `perWord` each (a quarter of that from off screen). With a focus: that word's whole row or column, whatever the window.
 */
export function linesToDraw(
  values: Float32Array,
  n: number,
  win: RowWindow,
  scale: OpacityScale,
  focus?: Focus,
  perWord = MAX_LINES_PER_WORD,
): { pairs: number[][][]; count: number } {
  const pairs: number[][][] = Array.from({ length: ALPHA_LEVELS }, () => [[], []]);
  let count = 0;
  const add = (i: number, j: number) => {
    const v = values[i * n + j] ?? NaN;
    const lvl = alphaLevel(lineAlpha(v, scale, i));
    if (lvl < 0) return;
    pairs[lvl]![v < 0 ? 1 : 0]!.push(i, j);
    count++;
  };
  if (focus) {
    if (focus.k < 0 || focus.k >= n) return { pairs, count };
    for (let o = 0; o < n; o++) {
      if (focus.side === 'query') add(focus.k, o);
      else add(o, focus.k);
    }
    return { pairs, count };
  }
  const alpha = (i: number, j: number) => lineAlpha(values[i * n + j] ?? NaN, scale, i);
  const strongestOf = (ends: number[], a: (o: number) => number, k = perWord) =>
    ends.length <= k ? ends : ends.sort((x, y) => a(y) - a(x)).slice(0, k);
  // Lines from queries off screen all run off the same edge: a quarter as many, or they bury the ones in view.
  const incoming = Math.ceil(perWord / 4);
  for (let i = win.first; i < win.last; i++) {
    const keys: number[] = [];
    for (let j = 0; j < n; j++) if (alpha(i, j) >= MIN_ALPHA) keys.push(j);
    for (const j of strongestOf(keys, (j) => alpha(i, j))) add(i, j);
  }
  // Queries off screen: only their lines to keys on screen cross the view.
  for (let j = win.first; j < win.last; j++) {
    const queries: number[] = [];
    for (let i = 0; i < n; i++) if ((i < win.first || i >= win.last) && alpha(i, j) >= MIN_ALPHA) queries.push(i);
    for (const i of strongestOf(queries, (i) => alpha(i, j), incoming)) add(i, j);
  }
  return { pairs, count };
}

/** The `count` largest |values| of a focus's row or column, largest first: [other end, value]. */
export function strongest(values: Float32Array, n: number, focus: Focus, count: number): [number, number][] {
  const out: [number, number][] = [];
  for (let o = 0; o < n; o++) {
    const v = focus.side === 'query' ? values[focus.k * n + o] : values[o * n + focus.k];
    if (v !== undefined && Number.isFinite(v)) out.push([o, v]);
  }
  return out.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, count);
}

/** `text` cut to at most `max` characters with an ellipsis (labels keep the column's width). */
export function clipLabel(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}
