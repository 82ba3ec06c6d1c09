// Pairs the clean text's positions with the corrupted text's when the two tokenize to different lengths, so a
// state patch knows where a clean row goes. Tokens both texts keep (a longest common subsequence of ids, specials
// included) pair up; inside a span that differs, tokens pair by character offset from the span's start (the one
// whose characters overlap most, in order), so "dog" → "big fox" puts dog's row at "big" and "dog" → "dog"+"s" at
// "dog"; what is left has no counterpart. Pure; written here because the texts differ, which Compare's alignment
// (one text, two tokenizers: src/shared/token-alignment.ts) does not handle.
import { LensError } from '../errors';

export interface AlignPiece {
  id: number;
  start: number;
  end: number;
}

/** Enough for 2,048 × 2,048 tokens (the DP's table is bytes). */
const MOST_CELLS = 2049 * 2049;

/** Index pairs [clean, corrupt] of a longest common subsequence of ids, ascending. */
function commonIds(a: readonly number[], b: readonly number[]): [number, number][] {
  // Strip the common head and tail first: the usual corruption changes a few tokens in the middle.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const pairs: [number, number][] = Array.from({ length: head }, (_, i) => [i, i]);
  const A = a.slice(head, a.length - tail),
    B = b.slice(head, b.length - tail);
  const w = B.length + 1;
  if ((A.length + 1) * w > MOST_CELLS) throw new LensError(`the texts are too long to align (${a.length} and ${b.length} tokens)`);
  // len[i][j]: LCS length of A[i…] and B[j…].
  const len = new Uint16Array((A.length + 1) * w);
  for (let i = A.length - 1; i >= 0; i--)
    for (let j = B.length - 1; j >= 0; j--)
      len[i * w + j] = A[i] === B[j] ? len[(i + 1) * w + j + 1]! + 1 : Math.max(len[(i + 1) * w + j]!, len[i * w + j + 1]!);
  for (let i = 0, j = 0; i < A.length && j < B.length;) {
    if (A[i] === B[j]) pairs.push([head + i++, head + j++]);
    else if (len[(i + 1) * w + j]! >= len[i * w + j + 1]!) i++;
    else j++;
  }
  for (let k = tail; k > 0; k--) pairs.push([a.length - k, b.length - k]);
  return pairs;
}

const overlap = (a: AlignPiece, a0: number, b: AlignPiece, b0: number) =>
  Math.max(0, Math.min(a.end - a0, b.end - b0) - Math.max(a.start - a0, b.start - b0));

/** Pairs the tokens of a span that differs, [i0, i1) of clean with [j0, j1) of corrupt, into `out`. */
function pairSpan(
  clean: readonly AlignPiece[],
  corrupt: readonly AlignPiece[],
  i0: number,
  i1: number,
  j0: number,
  j1: number,
  out: number[],
) {
  if (i1 - i0 === j1 - j0) {
    for (let k = 0; k < i1 - i0; k++) out[i0 + k] = j0 + k;
    return;
  }
  const a0 = clean[i0]?.start ?? 0,
    b0 = corrupt[j0]?.start ?? 0;
  let j = j0;
  for (let i = i0; i < i1 && j < j1; i++) {
    let best = -1,
      most = 0;
    for (let k = j; k < j1; k++) {
      const o = overlap(clean[i]!, a0, corrupt[k]!, b0);
      if (o > most) [best, most] = [k, o];
    }
    if (best >= 0) {
      out[i] = best;
      j = best + 1;
    }
  }
}

/** For each clean position, the corrupted position its values go to, or −1 (no counterpart). */
export function pairPositions(clean: readonly AlignPiece[], corrupt: readonly AlignPiece[]): number[] {
  const out = new Array<number>(clean.length).fill(-1);
  const anchors = commonIds(
    clean.map((t) => t.id),
    corrupt.map((t) => t.id),
  );
  let [pi, pj] = [0, 0];
  for (const [i, j] of [...anchors, [clean.length, corrupt.length] as [number, number]]) {
    if (i > pi || j > pj) pairSpan(clean, corrupt, pi, i, pj, j, out);
    if (i < clean.length) out[i] = j;
    [pi, pj] = [i + 1, j + 1];
  }
  return out;
}
