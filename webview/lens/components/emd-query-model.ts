// Pure parts of the EMD query band (./emd-query.ts): its summary and the line for one token. No DOM: the unit tests
// run it under node.
import { formatProb } from '../../../src/shared/format';

/** Per query token of the EMD's first pass: ‖P_i‖ / (‖H_i‖ + ‖P_i‖), and the two lengths. */
export interface QueryShares {
  share: Float32Array;
  contentNorm: Float32Array;
  positionNorm: Float32Array;
}

/** "position part of the query: mean 38.1%, 21.0% (#0 “[CLS]”) to 60.2% (#7 “new”)" over the text's tokens. */
export function shareSummary(q: QueryShares, name: (i: number) => string): string {
  const n = q.share.length;
  if (n === 0) return 'no tokens';
  let lo = 0,
    hi = 0,
    sum = 0;
  for (let i = 0; i < n; i++) {
    const v = q.share[i]!;
    sum += v;
    if (v < q.share[lo]!) lo = i;
    if (v > q.share[hi]!) hi = i;
  }
  return `position part of the query: mean ${formatProb(sum / n)}, ${formatProb(q.share[lo]!)} (${name(lo)}) to ${formatProb(q.share[hi]!)} (${name(hi)})`;
}

/** "#7 “new”: position 41.2% of the query (‖P‖ 1.23, ‖H‖ 1.76)". */
export function shareLine(q: QueryShares, i: number, name: (i: number) => string): string {
  const s = q.share[i];
  if (s === undefined) return '';
  return `${name(i)}: position ${formatProb(s)} of the query (‖P‖ ${q.positionNorm[i]!.toPrecision(3)}, ‖H‖ ${q.contentNorm[i]!.toPrecision(3)})`;
}
