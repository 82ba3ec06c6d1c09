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
