// Pure helpers of the bucket lens: zone colours and words, the per-zone summary and the pair readout. No DOM.
import type { Rgb } from '../../common/colors';
import type { BucketGroupInfo } from '../../../src/shared/protocol/lens';

export const ZONE_COLORS: Record<BucketGroupInfo['zone'], Rgb> = {
  exact: [166, 206, 227],
  log: [253, 191, 111],
  clamped: [227, 26, 28],
};

export const ZONE_TEXT: Record<BucketGroupInfo['zone'], string> = {
  exact: 'exact distance (one embedding row per δ)',
  log: 'log bucket (several δ share one row)',
  clamped: 'clamped at the span’s edge',
};

/** One line per zone: how many pairs fall in it and an example of pooled distances. */
export function bucketSummary(groups: readonly BucketGroupInfo[], mid: number): string[] {
  const zones: BucketGroupInfo['zone'][] = ['exact', 'log', 'clamped'];
  const out: string[] = [];
  for (const z of zones) {
    const gs = groups.filter((g) => g.zone === z);
    if (!gs.length) continue;
    const pairs = gs.reduce((a, g) => a + g.pairs, 0);
    const pooled = gs.filter((g) => g.deltas.length > 1);
    let line = `${ZONE_TEXT[z]}: ${pairs} pairs over ${gs.length} rows`;
    if (z === 'exact') line += ` (|δ| ≤ ${mid})`;
    if (pooled.length) {
      const g = pooled.reduce((a, b) => (b.deltas.length > a.deltas.length ? b : a));
      line += `; e.g. δ = ${g.deltas[0]}…${g.deltas[g.deltas.length - 1]} all read row ${g.row}`;
    }
    out.push(line);
  }
  return out;
}

/** Describes one pair of the bucket matrix. */
export function bucketPairText(
  i: number,
  j: number,
  zone: BucketGroupInfo['zone'],
  row: number,
  group: BucketGroupInfo | undefined,
): string {
  const d = i - j;
  const shared = group && group.deltas.length > 1 ? `, shared with δ ∈ {${group.deltas.join(', ')}}` : '';
  return `query #${i} → key #${j}: δ = ${d}, ${ZONE_TEXT[zone]}, table row ${row}${shared}`;
}
