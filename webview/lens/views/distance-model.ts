// Pure helpers of the distance profile view: series order and colours, the peak sentence and the chart's y
// range. No DOM.

/** A distance profile's series, in the order charts draw and sentences list them. */
export const PROFILE_ORDER = ['c2c', 'c2p', 'p2c', 'p2p'] as const;

/** Line colours of the distance chart: c2p and p2c as DeBERTa's chart has them; c2c grey (reference), p2p purple. */
export const SERIES_COLORS = { c2c: '#8c8c8c', c2p: '#d95f02', p2c: '#1b9e77', p2p: '#7570b3' } as const;

/** "peaks at δ = +1: looks one token to the left". δ = query − key, so δ > 0 means the key is to the left. */
export function peakSentence(delta: number, what = 'peaks'): string {
  if (!Number.isFinite(delta)) return `${what}: no data`;
  const sign = delta > 0 ? '+' : delta < 0 ? '−' : '';
  const head = `${what} at δ = ${sign}${Math.abs(delta)}`;
  if (delta === 0) return `${head}: looks at the token itself`;
  const count = Math.abs(delta) === 1 ? 'one token' : `${Math.abs(delta)} tokens`;
  return `${head}: looks ${count} to the ${delta > 0 ? 'left' : 'right'}`;
}

/** Y range of a profile chart: min/max of mean ± std over the finite entries (never empty). */
export function profileRange(series: { mean: Float32Array; std: Float32Array }[]): { min: number; max: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    s.mean.forEach((m, k) => {
      if (!Number.isFinite(m)) return;
      const sd = s.std[k] ?? NaN;
      const d = Number.isFinite(sd) ? sd : 0;
      lo = Math.min(lo, m - d);
      hi = Math.max(hi, m + d);
    });
  }
  if (!(lo <= hi)) return { min: -1, max: 1 };
  if (lo === hi) return { min: lo - 1, max: hi + 1 };
  return { min: lo, max: hi };
}
