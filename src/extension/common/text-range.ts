// What Explain runs on when nothing is selected: the paragraph around the cursor (lines up to the nearest
// blank lines), or the current line when that paragraph is too long. Pure, so it is unit-tested.

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
