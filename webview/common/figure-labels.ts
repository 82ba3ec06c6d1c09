// Axis labels of an exported figure: whole words (a word's first piece carries the word, the other pieces carry
// nothing), cleaned of characters a document cannot show, and thinned so that none overlaps at the figure's
// font size. Pure: no DOM, runs under node for tests.
import type { ProtocolToken } from '../../src/shared/protocol/token';

/** Longest label drawn whole; longer words end in "…". */
export const LABEL_MAX_CHARS = 14;

/** Characters that neither XML nor a canvas shows: C0 controls, DEL, U+FFFE/U+FFFF, lone surrogates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVISIBLE = /[\u0000-\u001f\u007f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A label as a figure shows it: controls as their Control Pictures (NUL → ␀), others as U+FFFD, at most 14 characters. */
export function cleanLabel(s: string): string {
  // Whitespace first (a word's offsets may take in the line break before it), then what is left unshowable.
  const shown = s
    .trim()
    .replace(/\s+/gu, ' ')
    .replace(INVISIBLE, (c) => {
      const code = c.charCodeAt(0);
      return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
    });
  const chars = [...shown.trim()];
  return chars.length > LABEL_MAX_CHARS ? `${chars.slice(0, LABEL_MAX_CHARS - 1).join('')}…` : chars.join('');
}

/** Whether token `t` starts a new word after `prev`: a special, a gap in the text, a space or a word marker first. */
function startsWord(text: string, t: ProtocolToken, prev: ProtocolToken | undefined): boolean {
  if (!prev || t.special || prev.special) return true;
  if (t.start > prev.end || t.end <= t.start) return true;
  if (/^[▁Ġ]/u.test(t.text)) return true;
  return /\s/u.test(text.charAt(t.start));
}

/**
 * One label per token: the whole word on a word's first piece (from the source text, so "▁gra" "gging" reads
 * "gragging" wherever a tokenizer split it), '' on the word's other pieces; specials keep their name.
 */
export function wordLabels(text: string, tokens: readonly ProtocolToken[]): string[] {
  const out: string[] = tokens.map(() => '');
  let k = 0;
  while (k < tokens.length) {
    const first = tokens[k];
    if (!first) break;
    let end = k + 1;
    while (end < tokens.length && !startsWord(text, tokens[end] as ProtocolToken, tokens[end - 1])) end++;
    const last = tokens[end - 1] ?? first;
    const word = first.special ? first.text : text.slice(first.start, last.end);
    out[k] = cleanLabel(word.trim() ? word : first.text.replace(/^[▁Ġ]+/u, '') || '␣');
    k = end;
  }
  return out;
}

/**
 * Which labels fit along an axis of `count` cells of `cellPt` points each at `fontPt`: every non-empty label
 * when cells are a line high, else labels at least a line apart (greedy from the first). Indices, ascending.
 */
export function thinLabels(labels: readonly string[], cellPt: number, fontPt: number): number[] {
  const line = fontPt * 1.2;
  // (A cell exactly a line high, up to rounding, fits every label.)
  const stride = cellPt >= line * (1 - 1e-9) ? 1 : Math.ceil((line / cellPt) * (1 - 1e-9));
  const shown: number[] = [];
  let last = -Infinity;
  labels.forEach((l, i) => {
    if (l && i - last >= stride) {
      shown.push(i);
      last = i;
    }
  });
  return shown;
}
