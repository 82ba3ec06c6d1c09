// The text steps of BERT's BasicTokenizer (transformers' tokenization_bert.py) and of the BertNormalizer /
// BertPreTokenizer of a tokenizer.json, on AlignedText so every character keeps its range in the original text.
// Character classes follow Python's unicodedata categories, which JavaScript's \p{…} classes also use.
import { AlignedText, codePointRanges, graphemeRanges } from './aligned-text';

// Category C (Cc, Cf, Cs, Co, Cn) except tab, newline and carriage return, which count as whitespace.
const CONTROL = /(?![\t\n\r])\p{C}/u;
// Whitespace for clean-up: space, tab, newline, carriage return and the space separators (Zs); the line and
// paragraph separators too, which Python's split() and Rust's is_whitespace treat as whitespace as well.
const CLEAN_SPACE = /[\t\n\r\p{Zs}\u2028\u2029]/u;
/** Python's str.isspace() / Rust's char::is_whitespace (the Unicode White_Space property), for splitting. */
// \x1c-\x1f are file/group/record/unit separators: Python's str.isspace() counts them as spaces.
// eslint-disable-next-line no-control-regex
export const PY_SPACE = /[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
export const RUST_SPACE = /[\t-\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
// All non-alphanumeric ASCII counts as punctuation ("^", "$", "`" included), then Unicode category P.
const PUNCT = /[!-/:-@[-`{-~\p{P}]/u;
const NON_SPACING_MARK = /\p{Mn}/gu;
const NEEDS_CLEAN = /[\0\ufffd\t\n\r\p{C}\p{Zs}\u2028\u2029]/u;

/** The CJK Unified Ideographs blocks BERT separates (not Japanese kana or Korean Hangul). */
export function isCjkIdeograph(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

export function isPunctuation(ch: string): boolean {
  return PUNCT.test(ch);
}

/** Drops NUL, U+FFFD and control characters; every whitespace character becomes one space. */
export function cleanText(t: AlignedText): AlignedText {
  if (!NEEDS_CLEAN.test(t.text)) return t;
  return t.mapPieces(codePointRanges(t.text), (c) =>
    c === '\0' || c === '\ufffd' || CONTROL.test(c) ? '' : CLEAN_SPACE.test(c) ? ' ' : c,
  );
}

/** Surrounds each CJK ideograph with spaces, so that each becomes a word of its own. */
export function spaceCjk(t: AlignedText): AlignedText {
  return t.mapPieces(codePointRanges(t.text), (c) => (isCjkIdeograph(c.codePointAt(0)!) ? ` ${c} ` : c));
}

export function nfc(t: AlignedText): AlignedText {
  return t.text.normalize('NFC') === t.text ? t : t.mapPieces(graphemeRanges(t.text), (g) => g.normalize('NFC'));
}

/** Lower-cases character by character, as transformers' pre-tokenization pass and Rust's to_lowercase do
 *  (so no final-sigma rule: a lone "Σ" becomes "σ"). */
export function lowercase(t: AlignedText): AlignedText {
  return t.text.toLowerCase() === t.text ? t : t.mapPieces(codePointRanges(t.text), (c) => c.toLowerCase());
}

/** Canonical decomposition, then every non-spacing mark (category Mn) removed. */
export function stripAccents(t: AlignedText): AlignedText {
  const strip = (s: string) => s.normalize('NFD').replace(NON_SPACING_MARK, '');
  return strip(t.text) === t.text ? t : t.mapPieces(graphemeRanges(t.text), strip);
}

/** Splits on whitespace characters, which are dropped. */
export function splitOnSpace(t: AlignedText, space: RegExp): AlignedText[] {
  const out: AlignedText[] = [];
  let start = -1;
  let i = 0;
  for (const ch of t.text) {
    if (space.test(ch)) {
      if (start >= 0) out.push(t.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
    i += ch.length;
  }
  if (start >= 0) out.push(t.slice(start, i));
  return out;
}

/** Every punctuation character becomes a word of its own. */
export function splitOnPunctuation(t: AlignedText): AlignedText[] {
  const out: AlignedText[] = [];
  let start = 0;
  let i = 0;
  for (const ch of t.text) {
    if (isPunctuation(ch)) {
      if (i > start) out.push(t.slice(start, i));
      out.push(t.slice(i, i + ch.length));
      start = i + ch.length;
    }
    i += ch.length;
  }
  if (t.text.length > start) out.push(t.slice(start, t.text.length));
  return out;
}

export interface BasicOptions {
  lowercase: boolean;
  /** Hugging Face's strip_accents: null follows lowercase. */
  stripAccents: boolean | null;
  chineseChars: boolean;
  /** Words kept whole: not lower-cased, accents kept, not split on punctuation. */
  neverSplit: ReadonlySet<string>;
}

/** BasicTokenizer.tokenize: clean, space out CJK, NFC, split on whitespace; then per word lower-case, strip
 *  accents and split on punctuation, unless the word is in neverSplit. */
export function basicTokenize(t: AlignedText, o: BasicOptions): AlignedText[] {
  let x = cleanText(t);
  if (o.chineseChars) x = spaceCjk(x);
  x = nfc(x);
  const strip = o.lowercase ? o.stripAccents !== false : o.stripAccents === true;
  const out: AlignedText[] = [];
  for (let word of splitOnSpace(x, PY_SPACE)) {
    if (o.neverSplit.has(word.text)) {
      out.push(word);
      continue;
    }
    if (o.lowercase) word = lowercase(word);
    if (strip) word = stripAccents(word);
    // A word of accents alone is empty now, and dropped.
    for (const w of splitOnPunctuation(word)) if (w.text.length > 0) out.push(w);
  }
  return out;
}
