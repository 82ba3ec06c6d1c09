// A heatmap as its colour-ramp steps (one byte a pixel), pooled to the side the screen shows. At 2,000 tokens a
// head is 3.8 M cells (7.7 MB in half precision) for a map drawn ~900 px wide: the host sends the ~0.8 MB the
// screen can show instead, and the view looks the steps up in its theme's colours. A pixel never averages a
// one-cell peak away: attention weights on a per-row scale (the default) are summed along the keys, the weight a
// query puts on that key group, and the pixel takes the largest of its queries; other maps take their block's
// strongest cell (for signed terms, the step farthest from 0, the positive one of a tie). Unpooled, the steps
// equal what the view's own mapping paints (mapValues, then paintMatrix) cell for cell.
// Pure: no DOM, no Node.
import { rowLogLimits, rowLogRange } from './row-scale';
import type { ScalingName } from './protocol/lens-names';
import { finiteExtent, LUT_SIZE, robustRange, withExactExtent, type Range } from './value-range';

export interface PooledSteps {
  /** Pixels a side (≤ n). */
  side: number;
  /** LUT step of each pixel, `[side, side]` row-major. */
  steps: Uint8Array;
  /** What the steps mean: the range the view's legend describes. */
  range: Range;
  /** How a pixel pools its block: 'sum', the largest of its queries' weight on its keys together (each query row
   *  then on its own scale over the key groups: `range` describes that); 'max', its strongest cell (signed:
   *  farthest from 0). */
  pooling: Pooling;
}

export type Pooling = 'sum' | 'max';

const TOP = LUT_SIZE - 1;
const MID = LUT_SIZE >> 1;

/** Block index of each of `n` rows or columns pooled into `side` (edges at floor(k·n/side), as the head grid's). */
export function blockOf(n: number, side: number): Int32Array {
  const out = new Int32Array(n);
  for (let b = 0, k = 0; b < side; b++) {
    const end = Math.floor(((b + 1) * n) / side);
    for (; k < end; k++) out[k] = b;
  }
  return out;
}

/** How a row's values become steps: per-row parameters a, b, c of one of three mappings (see `stepOf`). */
const enum Mode {
  /** round(clamp((fround(v × c) − a) × b)); NaN or b = 0: the midpoint. */
  Linear,
  /** Each row on its log scale from floor a, with c = ln(top / floor) (row-scale.ts). */
  RowLog,
  /** log10 between limits: a = log10(min), b = the span in decades, c = min. */
  Log,
}

/** The step of `v` (as the view's mapValues + paintMatrix paint it); one switch, so the call stays monomorphic. */
function stepOf(mode: Mode, v: number, a: number, b: number, c: number, mid: number): number {
  if (Number.isNaN(v)) return mode === Mode.Linear ? mid : 0;
  let t: number;
  if (mode === Mode.RowLog) {
    if (!(v > a)) return 0;
    // fround: the view keeps positions (and rows ÷ their max) as float32 before it rounds them to a step.
    return Math.round(Math.fround(Math.min(1, Math.log(v / a) / c)) * TOP);
  }
  if (mode === Mode.Log) t = Math.round((b > 0 ? (Math.log10(v > 0 ? v : c) - a) / b : 0) * TOP);
  else {
    if (b === 0) return mid;
    t = Math.round((Math.fround(v * c) - a) * b);
  }
  return t < 0 ? 0 : t > TOP ? TOP : t;
}

/**
 * The steps of head matrix `values` (`[n, n]`, keys along columns) under `scaling`, pooled to `side` (≤ n) pixels a
 * side, and the range they are coloured with. `side` = n gives every cell its own pixel.
 */
export function pooledSteps(values: Float32Array, n: number, signed: boolean, scaling: ScalingName, side: number): PooledSteps {
  if (!(side >= 1 && side <= n)) throw new RangeError(`picture side ${side} must be 1..${n}`);
  const rowLog = scaling === 'row-log' && !signed;
  // A row-log pick on a signed term is each row to its max (as mapValues).
  const perRow = rowLog || scaling === 'row' || scaling === 'row-log';
  const edges = Int32Array.from({ length: side + 1 }, (_, b) => Math.floor((b * n) / side));
  const rowBlock = blockOf(n, side);
  const rowSteps = new Int16Array(side);
  const out = new Uint8Array(side * side);
  const seen = new Uint8Array(side);
  const mid = signed ? MID : 0;
  let range: Range;
  let pooling: Pooling;
  if (!signed && perRow) {
    // Attention weights on a per-row scale: each query row over `side` key groups, a group's weight the sum of its
    // keys' (float32, as a mapped matrix holds it), mapped on that row's own scale over the groups (`keys` = side:
    // a row spread evenly is 1/side a group, as 1/n a key). A key group below the row's floor stays the page; a
    // one-key peak keeps at least its own weight.
    const sums = new Float32Array(side);
    let below = 0;
    let finite = 0;
    for (let i = 0; i < n; i++) {
      const base = i * n;
      let top = 0;
      let m = 0;
      for (let k = 0; k < side; k++) {
        let sum = 0;
        let any = false;
        const end = base + (edges[k + 1] ?? n);
        for (let j = base + (edges[k] ?? 0); j < end; j++) {
          const v = values[j] ?? NaN;
          if (v === v) {
            sum += v;
            any = true;
          }
        }
        sums[k] = any ? sum : NaN;
        const g = sums[k] ?? NaN;
        if (g > top) top = g;
        const x = Math.abs(g);
        if (x > m && x < Infinity) m = x;
      }
      if (rowLog) {
        const lim = rowLogLimits(top, side);
        const decades = Math.log(lim.hi / lim.lo);
        for (let k = 0; k < side; k++) {
          const g = sums[k] ?? NaN;
          if (Number.isFinite(g)) {
            finite++;
            if (!(g > lim.lo)) below++;
          }
          rowSteps[k] = stepOf(Mode.RowLog, g, lim.lo, 0, decades, 0);
        }
      } else {
        const scale = m > 0 ? 1 / m : 0;
        for (let k = 0; k < side; k++) rowSteps[k] = stepOf(Mode.Linear, sums[k] ?? NaN, 0, TOP, scale, 0);
      }
      poolRow(out, rowBlock[i] ?? 0, side, rowSteps, seen, false);
    }
    range = rowLog ? rowLogRange(finite ? below / finite : 0, side) : { min: 0, max: 1, signed: false, rows: true };
    // The legend then speaks of key groups, not keys.
    if (range.rowLog && side < n) range.rowLog.pooledFrom = n;
    pooling = 'sum';
  } else {
    // Every other map: each block's strongest cell. Every mapping is monotone in the value, so that is the step of
    // the block's largest value (or, signed, of its largest or smallest, whichever is farther from 0). Unsigned,
    // a block with no value above −∞ (NaN or −∞ only) is the low end, where both of those map.
    const global = perRow ? undefined : robustRange(values, signed, scaling);
    let mode = Mode.Linear;
    let a = 0,
      b = 0,
      c = 1;
    if (global?.log) {
      mode = Mode.Log;
      a = Math.log10(global.min);
      b = global.max > global.min ? Math.log10(global.max) - a : 0;
      c = global.min;
    } else if (global) {
      const span = global.max - global.min;
      a = global.min;
      b = span > 0 ? TOP / span : 0;
      // c = 1: fround(v) is v, a float32 already.
    }
    for (let i = 0; i < n; i++) {
      const base = i * n;
      if (perRow) {
        // Signed, each row to its largest |value|.
        let m = 0;
        for (let j = 0; j < n; j++) {
          const x = Math.abs(values[base + j] ?? 0);
          if (x > m && x < Infinity) m = x;
        }
        c = m > 0 ? 1 / m : 0;
        a = -1;
        b = TOP / 2;
      }
      for (let k = 0; k < side; k++) {
        let h = -Infinity;
        let l = Infinity;
        const end = base + (edges[k + 1] ?? n);
        for (let j = base + (edges[k] ?? 0); j < end; j++) {
          const v = values[j] ?? NaN;
          if (v > h) h = v;
          if (v < l) l = v;
        }
        if (!signed) rowSteps[k] = h > -Infinity ? stepOf(mode, h, a, b, c, mid) : 0;
        else if (h === -Infinity && l === Infinity) rowSteps[k] = mid;
        else {
          const up = stepOf(mode, h > -Infinity ? h : l, a, b, c, mid);
          const down = stepOf(mode, l < Infinity ? l : h, a, b, c, mid);
          rowSteps[k] = Math.abs(up - TOP / 2) >= Math.abs(down - TOP / 2) ? up : down;
        }
      }
      poolRow(out, rowBlock[i] ?? 0, side, rowSteps, seen, signed);
    }
    range = perRow ? { min: -1, max: 1, signed: true, rows: true } : withExactExtent(global!, finiteExtent(values));
    pooling = 'max';
  }
  return { side, steps: out, range, pooling };
}

/** Folds one query row's steps into its pixel row: the strongest (signed: farthest from 0; a tie, the positive). */
function poolRow(out: Uint8Array, pr: number, side: number, rowSteps: Int16Array, seen: Uint8Array, signed: boolean): void {
  const o = pr * side;
  if (!seen[pr]) {
    seen[pr] = 1;
    for (let b = 0; b < side; b++) out[o + b] = rowSteps[b] ?? 0;
  } else if (!signed) {
    for (let b = 0; b < side; b++) if ((rowSteps[b] ?? 0) > (out[o + b] ?? 0)) out[o + b] = rowSteps[b] ?? 0;
  } else {
    for (let b = 0; b < side; b++) {
      const s = rowSteps[b] ?? MID;
      const cur = out[o + b] ?? MID;
      const d = Math.abs(s - TOP / 2) - Math.abs(cur - TOP / 2);
      if (d > 0 || (d === 0 && s > cur)) out[o + b] = s;
    }
  }
}

/**
 * Tokens above which a heatmap comes as a picture: below, the half-precision matrix (≤ 2 MB) comes whole, and the
 * view lights hover neighbours from it at once; above, 1,000 tokens and more, it would be 2–8 MB a view change.
 */
export const PICTURE_FROM_TOKENS = 1024;

/** The side a map of n cells is sent at as a picture on a canvas of `backingPx`, or n when it comes whole. */
export function pictureSide(n: number, backingPx: number): number {
  if (n <= PICTURE_FROM_TOKENS) return n;
  return Math.max(1, Math.min(n, Math.round(backingPx)));
}
