// Merge subword pieces into words (prose) or identifiers (code), and pool matrices onto those groups.
//
// Boundaries between consecutive non-special pieces a, b (specials are always their own group):
//  1. b starts a word in the vocabulary: spm "▁", GPT-2 "Ġ" (space) or "Ċ" (newline) prefix; a bare "▁" piece
//     joins the word that follows it;
//  2. the source has a gap between them (b.start > a.end: whitespace the tokenizer dropped);
//  3. the characters on either side of the junction differ in class (word vs punctuation vs space), so
//     "world" + "," split but "-" + ">" stay one operator;
//  4. 'words' mode only: "_" is punctuation (snake_case splits into its parts) and a case hump splits camelCase
//     ("get"+"User", "HTTP"+"Server"). 'identifiers' mode keeps [A-Za-z0-9_$] runs whole.
// The characters are read from the source text through the offsets when given, else from the piece text with
// its marker stripped.
import { at, first, last } from '../shared/checked';
import { LensError } from '../engine/errors';
import type { Token } from '../engine/types';
import { blockCount } from './matrix';

export type MergeMode = 'words' | 'identifiers';

export interface WordGroup {
  /** Token indices, ascending and contiguous. */
  pieces: number[];
  /** [start, end) in the source text (from the pieces' offsets). */
  start: number;
  end: number;
  /** Display text (source slice, or joined pieces without markers), trimmed. */
  text: string;
  special: boolean;
}

const START_MARKERS = ['▁', 'Ġ', 'Ċ'];

function surface(t: Token, text: string | undefined): string {
  if (text !== undefined && t.end > t.start) return text.slice(t.start, t.end);
  return t.text.replace(/^[▁Ġ]/, ' ').replace(/^Ċ/, '\n');
}

type CharClass = 'space' | 'word' | 'punct' | 'none';

function charClass(c: string | undefined, mode: MergeMode): CharClass {
  if (c === undefined || c === '') return 'none';
  if (/\s/u.test(c)) return 'space';
  if (c === '_' || c === '$') return mode === 'identifiers' ? 'word' : 'punct';
  return /[\p{L}\p{N}\p{M}]/u.test(c) ? 'word' : 'punct';
}

function isUpper(c: string | undefined): boolean {
  return c !== undefined && c !== c.toLowerCase() && c === c.toUpperCase();
}
function isLowerOrDigit(c: string | undefined): boolean {
  return c !== undefined && (/\p{N}/u.test(c) || (c !== c.toUpperCase() && c === c.toLowerCase()));
}

function boundary(a: Token, b: Token, sa: string, sb: string, mode: MergeMode): boolean {
  if (START_MARKERS.some((m) => b.text.startsWith(m))) return true;
  if (b.end > b.start && a.end > a.start && b.start > a.end) return true;
  // A bare marker piece ("▁" alone, as spm emits before pieces it has no "▁x" for) opens the next word.
  if (START_MARKERS.includes(a.text) && sa.trim() === '' && charClass([...sb][0], mode) === 'word') return false;
  const last = [...sa].pop();
  const first = [...sb][0];
  const ca = charClass(last, mode);
  const cb = charClass(first, mode);
  if (ca === 'none' || cb === 'none') return false; // an empty piece joins its neighbour
  if (ca !== cb || ca === 'space') return true;
  if (mode === 'words' && ca === 'word') {
    if (isLowerOrDigit(last) && isUpper(first)) return true;
    const second = [...sb][1];
    if (isUpper(last) && isUpper(first) && isLowerOrDigit(second) && !/\p{N}/u.test(second ?? '')) return true;
  }
  return false;
}

export function groupWords(tokens: readonly Token[], text?: string, mode: MergeMode = 'words'): WordGroup[] {
  const groups: WordGroup[] = [];
  let cur: { pieces: number[]; s: string } | undefined;
  const flush = () => {
    if (!cur) return;
    const ts = cur.pieces.map((i) => at(tokens, i, 'token'));
    const withRange = ts.filter((t) => t.end > t.start);
    let start = withRange.length ? first(withRange).start : first(ts, 'the pieces of a word').start;
    const end = withRange.length ? last(withRange).end : first(ts, 'the pieces of a word').end;
    // Point at the word itself, not the space a leading "▁" piece covers.
    while (text !== undefined && start < end && /\s/u.test(text.charAt(start))) start++;
    groups.push({
      pieces: cur.pieces,
      start,
      end,
      text: cur.s.trim() || cur.s,
      special: false,
    });
    cur = undefined;
  };
  tokens.forEach((t, i) => {
    if (t.special) {
      flush();
      groups.push({ pieces: [i], start: t.start, end: t.end, text: t.text, special: true });
      return;
    }
    const s = surface(t, text);
    if (cur && !boundary(at(tokens, last(cur.pieces), 'token'), t, cur.s, s, mode)) {
      cur.pieces.push(i);
      cur.s += s;
    } else {
      flush();
      cur = { pieces: [i], s };
    }
  });
  flush();
  return groups;
}

/**
 * Pool `[n,n]` (or `[H,n,n]`) onto W groups, giving `[W,W]` (or `[H,W,W]`). Rows: mean over the group's pieces
 * as queries (a word asks what its pieces ask on average); columns: sum over the group's pieces as keys (a word
 * receives what any of its pieces receives). So probability rows still sum to 1. `columns: 'mean'` pools raw
 * terms or scores without letting long words grow. Tokens in no group are left out (rows then sum to < 1).
 */
export function poolGroups(
  matrix: Float32Array,
  n: number,
  groups: readonly { pieces: readonly number[] }[],
  opts: { columns?: 'sum' | 'mean' } = {},
): Float32Array {
  const H = blockCount(matrix, n);
  const W = groups.length;
  const groupOf = new Int32Array(n).fill(-1);
  groups.forEach((g, w) => {
    if (g.pieces.length === 0) throw new LensError(`analysis: word group ${w} has no pieces`);
    for (const p of g.pieces) {
      if (!Number.isInteger(p) || p < 0 || p >= n) throw new LensError(`analysis: word group ${w} names token ${p}, outside 0..${n - 1}`);
      if (groupOf[p] !== -1) throw new LensError(`analysis: token ${p} is in two word groups`);
      groupOf[p] = w;
    }
  });
  const out = new Float32Array(H * W * W);
  const acc = new Float64Array(W * W);
  for (let h = 0; h < H; h++) {
    acc.fill(0);
    for (let i = 0; i < n; i++) {
      const wi = groupOf[i]!;
      if (wi < 0) continue;
      for (let j = 0; j < n; j++) {
        const wj = groupOf[j]!;
        if (wj >= 0) acc[wi * W + wj]! += matrix[(h * n + i) * n + j]!;
      }
    }
    for (let a = 0; a < W; a++) {
      for (let b = 0; b < W; b++) {
        const colDiv = opts.columns === 'mean' ? groups[b]!.pieces.length : 1; // a, b < W = groups.length
        out[(h * W + a) * W + b] = acc[a * W + b]! / groups[a]!.pieces.length / colDiv;
      }
    }
  }
  return out;
}
