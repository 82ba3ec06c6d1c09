// The normalizers and pre-tokenizers of a Hugging Face tokenizer.json that DeBERTa tokenizers use, each
// keeping the alignment to the original text. Unknown kinds throw Error (the loader names the file).
import { AlignedText, codePointRanges } from './alignedText';
import { GPT2_SPLIT } from './byteLevel';
import { PrecompiledCharsmap } from './charsmap';
import { isRecord } from './files';
import { decodeUtf8, encodeUtf8 } from './utf8';

export type Normalizer = (t: AlignedText) => AlignedText;
export type PreTokenizer = (t: AlignedText) => AlignedText[];

type Json = Record<string, unknown>;

function patternOf(p: unknown): RegExp {
  if (isRecord(p) && typeof p.String === 'string') return new RegExp(escapeRegExp(p.String), 'gu');
  if (isRecord(p) && typeof p.Regex === 'string') return new RegExp(p.Regex, 'gu');
  throw new Error('Replace/Split pattern must be {"String": …} or {"Regex": …}');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Created on first use: building an Intl.Segmenter costs tens of milliseconds of ICU start-up.
let segmenter: Intl.Segmenter | undefined;
const graphemes = () => (segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' }));

function precompiled(blobBase64: string): Normalizer {
  const map = new PrecompiledCharsmap(new Uint8Array(Buffer.from(blobBase64, 'base64')));
  const transform = (s: string) => {
    const r = map.firstMatch(encodeUtf8(s));
    return r === undefined ? undefined : decodeUtf8(r);
  };
  // As Hugging Face does: a short grapheme is looked up whole, otherwise char by char.
  return (t) => {
    const pieces: Array<[number, number]> = [];
    for (const g of graphemes().segment(t.text)) {
      const s = g.index;
      const e = s + g.segment.length;
      if (encodeUtf8(g.segment).length < 6 && transform(g.segment) !== undefined) pieces.push([s, e]);
      else for (const [a, b] of codePointRanges(g.segment)) pieces.push([s + a, s + b]);
    }
    return t.mapPieces(pieces, (p) => transform(p) ?? p);
  };
}

export function buildNormalizer(json: unknown): Normalizer {
  if (json === null || json === undefined) return (t) => t;
  if (!isRecord(json)) throw new Error('normalizer must be an object');
  const j = json as Json;
  switch (j.type) {
    case 'Sequence': {
      const parts = (Array.isArray(j.normalizers) ? j.normalizers : []).map(buildNormalizer);
      return (t) => parts.reduce((acc, n) => n(acc), t);
    }
    case 'Precompiled':
      if (typeof j.precompiled_charsmap !== 'string' || j.precompiled_charsmap.length === 0) return (t) => t;
      return precompiled(j.precompiled_charsmap);
    case 'Replace': {
      const re = patternOf(j.pattern);
      const content = typeof j.content === 'string' ? j.content : '';
      return (t) => t.replace(re, content);
    }
    case 'Strip': {
      const left = j.strip_left !== false;
      const right = j.strip_right !== false;
      return (t) => {
        let s = 0;
        let e = t.text.length;
        if (left) while (s < e && /\s/u.test(t.text[s])) s++;
        if (right) while (e > s && /\s/u.test(t.text[e - 1])) e--;
        return t.slice(s, e);
      };
    }
    case 'Lowercase':
      return (t) => t.mapPieces(codePointRanges(t.text), (c) => c.toLowerCase());
    case 'NFC': case 'NFD': case 'NFKC': case 'NFKD': {
      const form = j.type;
      return (t) => t.mapPieces(codePointRanges(t.text), (c) => c.normalize(form));
    }
    case 'Prepend': {
      const p = typeof j.prepend === 'string' ? j.prepend : '';
      return (t) => (t.text.length ? t.prepend(p) : t);
    }
    default:
      throw new Error(`normalizer type ${String(j.type)} is not supported`);
  }
}

/** Splits so that each delimiter match begins the following piece (Metaspace's MergedWithNext). */
function splitMergedWithNext(t: AlignedText, delim: string): AlignedText[] {
  const out: AlignedText[] = [];
  let start = 0;
  for (let i = t.text.indexOf(delim, 1); i >= 0; i = t.text.indexOf(delim, i + delim.length)) {
    if (i > start) out.push(t.slice(start, i));
    start = i;
  }
  if (t.text.length > start) out.push(t.slice(start, t.text.length));
  return out;
}

function splitByRegex(t: AlignedText, re: RegExp, keep: 'isolated' | 'removed'): AlignedText[] {
  const out: AlignedText[] = [];
  let last = 0;
  for (const m of t.text.matchAll(re)) {
    const s = m.index;
    const e = s + m[0].length;
    if (e === s) continue;
    if (s > last) out.push(t.slice(last, s));
    if (keep === 'isolated') out.push(t.slice(s, e));
    last = e;
  }
  if (t.text.length > last) out.push(t.slice(last, t.text.length));
  return out;
}

export interface PreTokenizerInfo { run: PreTokenizer; byteLevel: boolean }

export function buildPreTokenizer(json: unknown): PreTokenizerInfo {
  if (json === null || json === undefined) return { run: (t) => [t], byteLevel: false };
  if (!isRecord(json)) throw new Error('pre_tokenizer must be an object');
  const j = json as Json;
  switch (j.type) {
    case 'Sequence': {
      const parts = (Array.isArray(j.pretokenizers) ? j.pretokenizers : []).map(buildPreTokenizer);
      return {
        run: (t) => parts.reduce<AlignedText[]>((acc, p) => acc.flatMap((x) => p.run(x)), [t]),
        byteLevel: parts.some((p) => p.byteLevel),
      };
    }
    case 'Metaspace': {
      const rep = typeof j.replacement === 'string' ? j.replacement : '▁';
      const scheme = typeof j.prepend_scheme === 'string' ? j.prepend_scheme : j.add_prefix_space === false ? 'never' : 'always';
      const split = j.split !== false;
      return {
        run: (t) => {
          let x = t.replace(/ /g, rep);
          // 'first' prepends only to the piece that starts the input.
          const prepend = scheme === 'always' || (scheme === 'first' && x.os[0] === 0);
          if (prepend && x.text.length && !x.text.startsWith(rep)) x = x.prepend(rep);
          return split ? splitMergedWithNext(x, rep) : [x];
        },
        byteLevel: false,
      };
    }
    case 'ByteLevel': {
      const addPrefix = j.add_prefix_space === true;
      const useRegex = j.use_regex !== false;
      return {
        run: (t) => {
          const x = addPrefix && t.text.length && !t.text.startsWith(' ') ? t.prepend(' ') : t;
          return useRegex ? splitByRegex(x, GPT2_SPLIT, 'isolated') : [x];
        },
        byteLevel: true,
      };
    }
    case 'WhitespaceSplit':
      return { run: (t) => splitByRegex(t, /\s+/gu, 'removed'), byteLevel: false };
    case 'Whitespace':
      return { run: (t) => splitByRegex(t, /\w+|[^\w\s]+/gu, 'isolated').filter((x) => !/^\s+$/u.test(x.text)), byteLevel: false };
    case 'Punctuation':
      return { run: (t) => splitByRegex(t, /[\p{P}!-/:-@[-`{-~]/gu, 'isolated'), byteLevel: false };
    default:
      throw new Error(`pre_tokenizer type ${String(j.type)} is not supported`);
  }
}
