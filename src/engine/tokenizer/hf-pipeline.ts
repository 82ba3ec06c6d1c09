// The normalizers and pre-tokenizers of a Hugging Face tokenizer.json that DeBERTa and BERT tokenizers use, each
// keeping the alignment to the original text. Unknown kinds throw Error (the loader names the file).
import { AlignedText, codePointRanges, graphemeRanges } from './aligned-text';
import { cleanText, lowercase, RUST_SPACE, spaceCjk, splitOnPunctuation, splitOnSpace, stripAccents } from './bert-basic';
import { GPT2_SPLIT } from './byte-level';
import { PrecompiledCharsmap } from './charsmap';
import { isRecord } from './files';
import { enterStage, stageId } from './stages';
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

function precompiled(blobBase64: string): Normalizer {
  const map = new PrecompiledCharsmap(new Uint8Array(Buffer.from(blobBase64, 'base64')));
  const transform = (s: string) => {
    const r = map.firstMatch(encodeUtf8(s));
    return r === undefined ? undefined : decodeUtf8(r);
  };
  // As Hugging Face does: a short grapheme is looked up whole, otherwise char by char.
  return (t) => {
    const pieces: Array<[number, number]> = [];
    for (const [s, e] of graphemeRanges(t.text)) {
      const g = t.text.slice(s, e);
      if (encodeUtf8(g).length < 6 && transform(g) !== undefined) pieces.push([s, e]);
      else for (const [a, b] of codePointRanges(g)) pieces.push([s + a, s + b]);
    }
    return t.mapPieces(pieces, (p) => transform(p) ?? p);
  };
}

/** How a construct is named in a budget error: its type and, for Replace/Split, its pattern. */
function describe(kind: string, j: Json): string {
  const p = j.pattern;
  const pattern =
    isRecord(p) && typeof p.Regex === 'string'
      ? ` /${p.Regex}/`
      : isRecord(p) && typeof p.String === 'string'
        ? ` ${JSON.stringify(p.String)}`
        : '';
  return `${kind} ${String(j.type)}${pattern}`;
}

/** Real tokenizers nest a Sequence one level deep; a file nesting thousands would overflow the stack. */
const MAX_NESTING = 32;

function checkDepth(kind: string, depth: number): void {
  if (depth > MAX_NESTING) throw new Error(`${kind} Sequences are nested more than ${MAX_NESTING} deep`);
}

export function buildNormalizer(json: unknown, depth = 0): Normalizer {
  if (json === null || json === undefined) return (t) => t;
  if (!isRecord(json)) throw new Error('normalizer must be an object');
  checkDepth('normalizer', depth);
  const j = json as Json;
  const run = buildNormalizerStep(j, depth);
  if (j.type === 'Sequence') return run;
  const stage = stageId(describe('normalizer', j));
  return (t) => {
    enterStage(stage);
    return run(t);
  };
}

function buildNormalizerStep(j: Json, depth: number): Normalizer {
  switch (j.type) {
    case 'Sequence': {
      const parts = (Array.isArray(j.normalizers) ? j.normalizers : []).map((n) => buildNormalizer(n, depth + 1));
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
        if (left) while (s < e && /\s/u.test(t.text.charAt(s))) s++;
        if (right) while (e > s && /\s/u.test(t.text.charAt(e - 1))) e--;
        return t.slice(s, e);
      };
    }
    case 'Lowercase':
      return (t) => t.mapPieces(codePointRanges(t.text), (c) => c.toLowerCase());
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD': {
      const form = j.type;
      return (t) => t.mapPieces(codePointRanges(t.text), (c) => c.normalize(form));
    }
    case 'BertNormalizer': {
      // Hugging Face's order: clean, space out CJK, strip accents (by default when lower-casing), lower-case.
      const clean = j.clean_text !== false;
      const cjk = j.handle_chinese_chars !== false;
      const lower = j.lowercase !== false;
      const strip = typeof j.strip_accents === 'boolean' ? j.strip_accents : lower;
      return (t) => {
        let x = clean ? cleanText(t) : t;
        if (cjk) x = spaceCjk(x);
        if (strip) x = stripAccents(x);
        return lower ? lowercase(x) : x;
      };
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

export interface PreTokenizerInfo {
  run: PreTokenizer;
  byteLevel: boolean;
}

export function buildPreTokenizer(json: unknown, depth = 0): PreTokenizerInfo {
  if (json === null || json === undefined) return { run: (t) => [t], byteLevel: false };
  if (!isRecord(json)) throw new Error('pre_tokenizer must be an object');
  checkDepth('pre_tokenizer', depth);
  const j = json as Json;
  const step = buildPreTokenizerStep(j, depth);
  if (j.type === 'Sequence') return step;
  const stage = stageId(describe('pre_tokenizer', j));
  return {
    run: (t) => {
      enterStage(stage);
      return step.run(t);
    },
    byteLevel: step.byteLevel,
  };
}

function buildPreTokenizerStep(j: Json, depth: number): PreTokenizerInfo {
  switch (j.type) {
    case 'Sequence': {
      const parts = (Array.isArray(j.pretokenizers) ? j.pretokenizers : []).map((p) => buildPreTokenizer(p, depth + 1));
      return {
        run: (t) => parts.reduce<AlignedText[]>((acc, p) => acc.flatMap((x) => p.run(x)), [t]),
        byteLevel: parts.some((p) => p.byteLevel),
      };
    }
    case 'Metaspace': {
      const rep = j.replacement === undefined ? '▁' : j.replacement;
      // Hugging Face declares the replacement a single char; an empty one would split at every position forever.
      if (typeof rep !== 'string' || [...rep].length !== 1) {
        throw new Error(`Metaspace replacement ${JSON.stringify(rep)} must be exactly one character`);
      }
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
    case 'BertPreTokenizer':
      return { run: (t) => splitOnSpace(t, RUST_SPACE).flatMap(splitOnPunctuation), byteLevel: false };
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
