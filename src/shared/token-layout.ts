// Lays the tokens out like the source text: the gaps between tokens keep their spaces and line breaks, and
// special tokens ([CLS], [SEP]) appear as marked pieces. Pure: the DOM code only renders what this returns.
import type { ProtocolToken } from './protocol/token';

export type Segment = { kind: 'token'; i: number; text: string; special: boolean } | { kind: 'gap'; text: string };

/** One visual line of the strip. */
export type Line = Segment[];

/** Shows a lone word-boundary piece ("▁", "Ġ") or a space-only token: a visible open-box space marker. */
export const SPACE_MARKER = '␣';

/** Strips the tokenizer's word-boundary markers for display; a piece that is only a marker shows as ␣. */
export function pieceLabel(piece: string): string {
  const s = piece.replace(/^[▁Ġ]+/u, '');
  return s.trim().length ? s : SPACE_MARKER;
}

/** Splits a run of source text on line breaks (\r\n, \n, \r): the pieces between breaks. */
function splitLines(s: string): string[] {
  return s.split(/\r\n|\n|\r/);
}

export function layoutTokens(text: string, tokens: readonly ProtocolToken[]): Line[] {
  let line: Line = [];
  const lines: Line[] = [line];
  const push = (seg: Segment) => line.push(seg);
  const breakLine = () => lines.push((line = []));
  // Text with line breaks becomes several segments on consecutive lines.
  const pushText = (s: string, make: (part: string) => Segment) => {
    splitLines(s).forEach((part, k) => {
      if (k > 0) breakLine();
      if (part.length) push(make(part));
    });
  };
  let cursor = 0;
  for (const t of tokens) {
    if (t.special) {
      // A special written in the text ([MASK]) stands where it was written, in place of its characters.
      if (t.end > t.start && t.start >= cursor) {
        if (t.start > cursor) pushText(text.slice(cursor, t.start), (part) => ({ kind: 'gap', text: part }));
        cursor = t.end;
      }
      push({ kind: 'token', i: t.i, text: t.text, special: true });
      continue;
    }
    const start = Math.max(t.start, cursor);
    if (start > cursor) pushText(text.slice(cursor, start), (part) => ({ kind: 'gap', text: part }));
    const own = text.slice(start, Math.max(start, t.end));
    if (/[\r\n]/.test(own)) {
      // A token spanning a line break keeps the break; a break-only token shows as ↵ where the line ends.
      const parts = splitLines(own);
      const visible = parts.some((p) => p.trim().length);
      parts.forEach((part, k) => {
        if (k > 0) breakLine();
        if (part.length && visible) push({ kind: 'token', i: t.i, text: part, special: false });
        else if (!visible && k === 0) push({ kind: 'token', i: t.i, text: part + '↵', special: false });
      });
    } else {
      // Tokens that share source characters (byte fallback) or carry only spaces still need a visible piece.
      // A leading space is laid out as a gap: highlighted, it would leave a stub where the line wraps.
      const lead = own.length - own.trimStart().length;
      if (own.trim().length && lead > 0) {
        push({ kind: 'gap', text: own.slice(0, lead) });
        push({ kind: 'token', i: t.i, text: own.slice(lead), special: false });
      } else push({ kind: 'token', i: t.i, text: own.trim().length ? own : pieceLabel(t.text), special: false });
    }
    cursor = Math.max(cursor, t.end);
  }
  if (cursor < text.length) pushText(text.slice(cursor), (part) => ({ kind: 'gap', text: part }));
  return lines;
}

/** For each source UTF-16 offset inside a token (a written [MASK] included), the token index (the editor's cursor → token map). */
export function tokenAtOffset(tokens: readonly ProtocolToken[], offset: number): number | null {
  let best: number | null = null;
  for (const t of tokens) {
    // Specials the model adds ([CLS], [SEP]) cover no characters; a [MASK] written in the text does.
    if (t.end <= t.start) continue;
    if (offset >= t.start && offset < t.end) return t.i;
    // A cursor just after a token's last character still belongs to it (the caret sits at the end).
    if (offset === t.end) best = t.i;
  }
  return best;
}

/**
 * The part of a token's source span [start, end) that shows ink: leading and trailing whitespace (the space a
 * "▁" piece carries, a line break) trimmed off, so a highlight never paints a stub at a line's end or start.
 * Null when the span is only whitespace (a lone "▁" on a line break): there is nothing to highlight.
 */
export function visibleSpan(text: string, start: number, end: number): { start: number; end: number } | null {
  let s = Math.max(0, start);
  let e = Math.min(text.length, end);
  while (s < e && /\s/u.test(text.charAt(s))) s++;
  while (e > s && /\s/u.test(text.charAt(e - 1))) e--;
  return e > s ? { start: s, end: e } : null;
}
