// The title of a readout list, from what it shows: "Top 5 by probs (+3 on hover):" when 5 of 8 fit its line,
// so a list never names more items than are on screen. Pure, for tests.

export type ListKind = 'top' | 'raises' | 'lowers';

export function listLabel(kind: ListKind, term: string, shown: number, total: number): string {
  const more = total > shown ? ` (+${total - shown} on hover)` : '';
  const n = total ? ` ${shown}` : '';
  if (kind === 'top') return `Top${n} by ${term}${more}:`;
  if (kind === 'raises') return `Raises the score (top${n}, ${term})${more}:`;
  return `Lowers it (top${n})${more}:`;
}
