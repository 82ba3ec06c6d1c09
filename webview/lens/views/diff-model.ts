// Pure helpers of the selection diff view (current − previous explain): its captions and the warning when the
// two explains are not the same passage. No DOM.

/** Shown in the Diff tab before there are two results to compare. */
export const DIFF_EMPTY = 'Explain twice (e.g. before and after an edit) to compare: the Diff tab then shows current − previous.';

/** "current − previous explain, 12 of 14 tokens matched (previous had 13)". */
export function diffCaption(
  kind: string,
  layer: number,
  head: number,
  matched: number,
  nB: number,
  nA: number,
  what = 'current − previous explain',
): string {
  return `${kind}, layer ${layer}, head ${head}: ${what}, ${matched} of ${nB} tokens matched (previous had ${nA}).`;
}

/**
 * Below this share of the shorter text's tokens matched, the two explains are not the same passage (an edit
 * keeps most tokens; unrelated paragraphs still share "the", "of" and punctuation, typically 10–25%).
 */
export const SAME_PASSAGE_SHARE = 0.5;

/** A warning when the diff compares different passages, or undefined when it compares two versions of one. */
export function diffMismatch(matched: number, nB: number, nA: number): string | undefined {
  const shorter = Math.min(nA, nB);
  if (shorter === 0 || matched / shorter >= SAME_PASSAGE_SHARE) return undefined;
  return `These are not the same passage: only ${matched} of ${shorter} tokens (${Math.round((100 * matched) / shorter)}%) matched, so the differences mostly compare unrelated words. Explain an edited version of the same text to compare.`;
}

/**
 * The diff over every token of the current text: matched cells hold current − previous, and the rows and columns
 * of tokens an edit inserted hold NaN (there is nothing to subtract), so the edited tokens keep their place.
 * `inserted` lists those tokens' indices in the current text.
 */
export function diffOverCurrent(
  values: Float32Array,
  pairs: readonly (readonly [number, number])[],
  nB: number,
): { values: Float32Array; inserted: number[] } {
  const P = pairs.length;
  const out = new Float32Array(nB * nB).fill(NaN);
  for (let p = 0; p < P; p++) {
    const bp = pairs[p]![1];
    for (let q = 0; q < P; q++) out[bp * nB + pairs[q]![1]] = values[p * P + q]!;
  }
  const matched = new Set(pairs.map(([, b]) => b));
  const inserted = Array.from({ length: nB }, (_, k) => k).filter((k) => !matched.has(k));
  return { values: out, inserted };
}

/** "Edited: 2 tokens new in this text (“slow”, “ly”), 1 removed from the previous one (“quick”)." or undefined. */
export function editedLine(inserted: readonly string[], removed: readonly string[]): string | undefined {
  if (!inserted.length && !removed.length) return undefined;
  const some = (words: readonly string[]) =>
    `${words
      .slice(0, 6)
      .map((w) => `“${w}”`)
      .join(', ')}${words.length > 6 ? ', …' : ''}`;
  const parts = [];
  if (inserted.length)
    parts.push(`${inserted.length} token${inserted.length === 1 ? '' : 's'} new in this text (${some(inserted)}, grey: no previous value)`);
  if (removed.length) parts.push(`${removed.length} removed from the previous one (${some(removed)})`);
  return `Edited: ${parts.join('; ')}.`;
}
