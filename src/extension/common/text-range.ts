// What Explain runs on when nothing is selected: the paragraph around the cursor (lines up to the nearest
// blank lines), or the current line when that paragraph is too long; and what a selection gives the model: one text,
// a sentence pair (two selections, or [SEP] typed once), or a prompt and its choices. Pure, so it is unit-tested.
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

/** One text of a selection and where it starts in the selected text. */
export interface SelectionPart {
  text: string;
  offset: number;
}

/** How the texts were given: [SEP] typed between them in one selection, or one selection each. */
export type PartSource = 'sep' | 'selections';

/** What the model reads: one text, a sentence pair (the second text from `pairOffset` of the selected text), and for a
 *  multiple-choice head the prompt and every choice (the pair is the choice on screen). */
export interface SelectionInput {
  input: { text: string; pair?: string; pairOffset?: number };
  choices?: { prompt: string; list: string[]; offsets: number[]; shown: number };
}

/** The texts between typed [SEP]s: the first as it starts, later ones from their first non-space character; every
 *  text without trailing space. */
export function sepParts(text: string): SelectionPart[] {
  const parts: SelectionPart[] = [];
  let from = 0;
  for (;;) {
    const k = text.indexOf(SEP, from);
    const raw = text.slice(from, k < 0 ? text.length : k);
    const lead = from === 0 ? 0 : raw.length - raw.trimStart().length;
    parts.push({ text: raw.slice(lead).trimEnd(), offset: from + lead });
    if (k < 0) return parts;
    from = k + SEP.length;
  }
}

/**
 * The model's input from a selection's texts. Two texts are a sentence pair; a multiple-choice head (`task`) takes a
 * prompt and two choices or more, and reads the choice `shown` (default the first) with the prompt.
 */
export function selectionInput(parts: readonly SelectionPart[], source: PartSource, task?: string | null, shown = 0): SelectionInput {
  const [first, second] = parts;
  if (!first) throw new LensError('Nothing to explain: select some text.');
  if (task === 'multiple-choice' && parts.length > 1) {
    if (parts.length < 3)
      throw new LensError(
        `This checkpoint has a multiple-choice head: it scores a prompt's choices. ${source === 'sep' ? `Type ${SEP} between the prompt and each choice` : 'Select the prompt and each choice (Alt+click)'} — two choices at least.`,
      );
    if (parts.some((p) => !p.text.trim()))
      throw new LensError(`Text is needed between each ${SEP}: the prompt first, then one choice after each ${SEP}.`);
    const choices = parts.slice(1);
    const k = Math.min(Math.max(0, shown), choices.length - 1);
    const on = choices[k]!;
    return {
      input: { text: first.text, pair: on.text, pairOffset: on.offset },
      choices: { prompt: first.text, list: choices.map((c) => c.text), offsets: choices.map((c) => c.offset), shown: k },
    };
  }
  if (parts.length > 2)
    throw new LensError(
      source === 'sep'
        ? `The selection has more than one ${SEP}: a sentence pair is two texts, so type ${SEP} once between them (a multiple-choice checkpoint takes a prompt and its choices).`
        : `${parts.length} selections: select one text, or two for a sentence pair (the earlier one is the first text).`,
    );
  if (!second) return { input: { text: first.text } };
  if (!first.text.trim() || !second.text.trim())
    throw new LensError(
      source === 'sep'
        ? `Text is needed on both sides of ${SEP}: the first text before it, the second after it.`
        : 'One of the two selections is only whitespace: select two texts for a sentence pair.',
    );
  return { input: { text: first.text, pair: second.text, pairOffset: second.offset } };
}

/** "A [SEP] B" as the pair (A, B), B's offset into the text after the separator and its spaces; else one text. */
export function splitAtSep(text: string): { text: string; pair?: string; pairOffset?: number } {
  const parts = sepParts(text);
  // One text keeps its trailing space, as it was selected.
  return parts.length === 1 ? { text } : selectionInput(parts, 'sep').input;
}
