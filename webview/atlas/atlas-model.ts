// The atlas panel's pure parts: axis scales and ticks, the table's sort, each head's dominant term, and the
// pairing of two atlases head by head (which heads moved). No DOM.
import type { AtlasHeadView, AtlasMetric, AtlasView } from '../../src/shared/atlas';

export type Term = 'c2c' | 'c2p' | 'p2c';
export const TERMS: readonly Term[] = ['c2c', 'c2p', 'p2c'];

/** The term with the largest share; undefined for a head with no shares (BERT). Ties go to the earlier term. */
export function dominantTerm(m: AtlasHeadView['metrics']): Term | undefined {
  let best: Term | undefined;
  for (const t of TERMS) {
    const v = m[`${t}_share`];
    if (v !== undefined && Number.isFinite(v) && (best === undefined || v > m[`${best}_share`]!)) best = t;
  }
  return best;
}

/** The metrics some head of these atlases has (a BERT atlas has no shares): the axes' and the table's choices. */
export function metricsPresent(atlases: readonly AtlasView[], all: readonly AtlasMetric[]): AtlasMetric[] {
  return all.filter((k) => atlases.some((a) => a.rows.some((r) => r.metrics[k] !== undefined)));
}

export interface LinearScale {
  /** The domain, widened to round ticks. */
  min: number;
  max: number;
  ticks: number[];
  /** Value → pixel, from `from` (at min) to `to` (at max). */
  at(v: number): number;
}

/** A tick step of 1, 2 or 5 × 10^k giving about `count` ticks over `span`. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0)) return 1;
  const raw = span / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/** A linear scale over the finite values, widened to whole ticks; a single value gets a span around it. */
export function linearScale(values: readonly number[], from: number, to: number, count = 5): LinearScale {
  const finite = values.filter(Number.isFinite);
  let lo = finite.length ? Math.min(...finite) : 0;
  let hi = finite.length ? Math.max(...finite) : 1;
  if (hi - lo < 1e-12) {
    const pad = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 0.5;
    [lo, hi] = [lo - pad, hi + pad];
  }
  const step = niceStep(hi - lo, count);
  const min = Math.floor(lo / step + 1e-9) * step;
  const max = Math.ceil(hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let k = 0; min + k * step <= max + step * 1e-9; k++) ticks.push(Number((min + k * step).toPrecision(12)));
  return { min, max, ticks, at: (v) => from + ((v - min) / (max - min)) * (to - from) };
}

/** A table column: layer, head, or a metric (of the first atlas, or its difference to the second). */
export type SortKey = 'layer' | 'head' | AtlasMetric;
export interface Sort {
  key: SortKey;
  descending: boolean;
}

/** One table row: a head of the first atlas and, where the second has the same head, its difference (b − a). */
export interface AtlasRow {
  layer: number;
  head: number;
  a: AtlasHeadView;
  b?: AtlasHeadView;
  delta: Partial<Record<AtlasMetric, number>>;
}

/** A row's value under `key`: the difference when two atlases are paired, the metric otherwise. */
export function sortValue(r: AtlasRow, key: SortKey, paired: boolean): number | undefined {
  if (key === 'layer') return r.layer;
  if (key === 'head') return r.head;
  return paired ? r.delta[key] : r.a.metrics[key];
}

/**
 * Rows sorted by `key` (for a paired difference, by its size: the heads that moved most first when descending);
 * missing values last either way; ties by layer then head, so the order is stable.
 */
export function sortRows(rows: readonly AtlasRow[], sort: Sort, paired: boolean): AtlasRow[] {
  const value = (r: AtlasRow) => {
    const v = sortValue(r, sort.key, paired);
    return v !== undefined && paired && sort.key !== 'layer' && sort.key !== 'head' ? Math.abs(v) : v;
  };
  return [...rows].sort((x, y) => {
    const vx = value(x),
      vy = value(y);
    if (vx === undefined || vy === undefined || !Number.isFinite(vx) || !Number.isFinite(vy)) {
      const mx = vx === undefined || !Number.isFinite(vx),
        my = vy === undefined || !Number.isFinite(vy);
      if (mx !== my) return mx ? 1 : -1;
    } else if (vx !== vy) return sort.descending ? vy - vx : vx - vy;
    return x.layer - y.layer || x.head - y.head;
  });
}

/**
 * The first atlas's heads, each with the second's same (layer, head) and the per-metric difference b − a. `paired`
 * is false when the geometries differ (another number of layers or heads): then no head has a partner.
 */
export function pairAtlases(a: AtlasView, b?: AtlasView): { rows: AtlasRow[]; paired: boolean } {
  const paired = b !== undefined && b.layers === a.layers && b.heads === a.heads;
  const byKey = new Map((paired ? b.rows : []).map((r) => [`${r.layer}/${r.head}`, r]));
  const rows = a.rows.map((ra): AtlasRow => {
    const rb = byKey.get(`${ra.layer}/${ra.head}`);
    const delta: AtlasRow['delta'] = {};
    if (rb)
      for (const [k, v] of Object.entries(ra.metrics) as [AtlasMetric, number][]) {
        const w = rb.metrics[k];
        if (w !== undefined) delta[k] = w - v;
      }
    return { layer: ra.layer, head: ra.head, a: ra, ...(rb ? { b: rb } : {}), delta };
  });
  return { rows, paired };
}

/** Short labels for the select and the table. */
export const METRIC_LABELS: Record<AtlasMetric, string> = {
  c2c_share: 'c2c share',
  c2p_share: 'c2p share',
  p2c_share: 'p2c share',
  mean_distance: 'mean distance (tokens)',
  entropy: 'entropy (nats)',
  special_mass: 'special mass',
  max_prob: 'max prob',
  prev_token: 'prev token',
  next_token: 'next token',
};

/** A metric's value for a cell: 3 significant decimals, a sign on a difference. */
export function formatMetric(v: number | undefined, signed = false): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const s = Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3);
  return signed && v > 0 ? `+${s}` : s;
}

/** The head nearest to (x, y) within `radius` pixels, given each head's pixel position; -1 if none. */
export function nearestPoint(points: readonly { x: number; y: number }[], x: number, y: number, radius: number): number {
  let best = -1,
    bestD = radius * radius;
  points.forEach((p, k) => {
    const d = (p.x - x) ** 2 + (p.y - y) ** 2;
    if (d <= bestD) [best, bestD] = [k, d];
  });
  return best;
}
