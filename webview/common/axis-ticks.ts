// Where a map's axis labels go and how big the map is: pure arithmetic (no DOM), so it runs under node for tests.

/**
 * Rows of the window [start, start + span) that get an axis label. Every row when `stride` is 1; otherwise, with
 * `words` (one label per row, '' on a word's later pieces), only rows that start a word, at least `stride` rows
 * apart (greedy from the window's start), so a label never reads a piece such as "aving" or a lone space; without
 * `words`, every `stride`-th row.
 */
export function axisTicks(words: readonly string[] | undefined, start: number, span: number, stride: number): number[] {
  const end = start + span;
  const out: number[] = [];
  if (stride <= 1) {
    for (let k = start; k < end; k++) out.push(k);
    return out;
  }
  if (!words) {
    for (let k = Math.ceil(start / stride) * stride; k < end; k += stride) out.push(k);
    return out;
  }
  let last = -Infinity;
  for (let k = start; k < end; k++) {
    const w = words[k] ?? '';
    if (!w.trim() || w === '␣' || k - last < stride) continue;
    out.push(k);
    last = k;
  }
  return out;
}

export interface MapRoom {
  /** CSS px across that the map itself may take (the axis labels already taken off). */
  width: number;
  /** CSS px from the map's top to the bottom of the page. */
  height: number;
  /** Rows (= columns) of the matrix. */
  n: number;
  /** Smallest side that is still readable, and the largest worth drawing. */
  min?: number;
  max?: number;
}

/**
 * Side of a square map in CSS px: the smaller of the free width and height (never under `min`), and where cells
 * are at least 2 px, a whole number of px per cell so that every cell is drawn the same size.
 */
export function mapSide({ width, height, n, min = 200, max = 1600 }: MapRoom): number {
  const side = Math.max(min, Math.min(max, Math.floor(width), Math.floor(height)));
  if (n > 0 && side / n >= 2) return Math.floor(side / n) * n;
  return side;
}

/**
 * How many maps go in one row of `width` px: all `count` while each keeps `min` px of map besides its own
 * `each` px of axes, with `gap` px between; else as many as do, at least one.
 */
export function columnsFor(width: number, count: number, o: { each: number; gap: number; min: number }): number {
  const fit = Math.floor((width + o.gap) / (o.min + o.each + o.gap));
  return Math.max(1, Math.min(count, fit));
}
