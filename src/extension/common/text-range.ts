// What Explain runs on when nothing is selected: the paragraph around the cursor (lines up to the nearest
// blank lines), or the current line when that paragraph is too long; and a selection with [SEP] typed in it as a
// sentence pair. Pure, so it is unit-tested.
import { LensError } from '../../engine';

export interface LineRange {
  /** First and last line, inclusive. */
  start: number;
  end: number;
}

const blank = (s: string) => s.trim().length === 0;

/** Lines of the paragraph containing `line`; a blank line gives itself. `maxChars` caps the paragraph's size. */
export function paragraphAround(lines: readonly string[], line: number, maxChars = 20000): LineRange {
  // Past either end counts as blank: the paragraph stops there.
  const blankAt = (k: number) => blank(lines[k] ?? '');
  if (line < 0 || line >= lines.length || blankAt(line)) return { start: line, end: line };
  let start = line;
  let end = line;
  while (start > 0 && !blankAt(start - 1)) start--;
  while (end < lines.length - 1 && !blankAt(end + 1)) end++;
  let chars = 0;
  for (const l of lines.slice(start, end + 1)) chars += l.length + 1;
  return chars > maxChars ? { start: line, end: line } : { start, end };
}

const SEP = '[SEP]';

/** "A [SEP] B" as the pair (A, B), B's offset into the text after the separator and its spaces; else one text. */
export function splitAtSep(text: string): { text: string; pair?: string; pairOffset?: number } {
  const k = text.indexOf(SEP);
  if (k < 0) return { text };
  if (text.indexOf(SEP, k + SEP.length) >= 0)
    throw new LensError(`The selection has more than one ${SEP}: a sentence pair is two texts, so type ${SEP} once between them.`);
  const first = text.slice(0, k).trimEnd();
  const rest = text.slice(k + SEP.length);
  const pairOffset = k + SEP.length + (rest.length - rest.trimStart().length);
  const pair = text.slice(pairOffset).trimEnd();
  if (!first.trim() || !pair.trim())
    throw new LensError(`Text is needed on both sides of ${SEP}: the first text before it, the second after it.`);
  return { text: first, pair, pairOffset };
}
