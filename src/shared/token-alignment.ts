// Aligns two tokenizations of the same text by character offsets: the smallest spans of characters that
// whole tokens on both sides cover, each with the tokens of side A and of side B inside it. Different
// tokenizers split differently (SentencePiece keeps the leading space in a piece, WordPiece drops it and adds
// ## pieces, either may map a character to [UNK]); only the characters they cover are compared. Pure.

/** What alignment needs of a token: its [start, end) in UTF-16 units of the text, and whether it is a special. */
export interface AlignToken {
  start: number;
  end: number;
  special: boolean;
  text?: string;
}

export interface AlignedGroup {
  /** Token indices on side A and side B, ascending; one side is empty where only the other covers the text. */
  a: number[];
  b: number[];
  /** [start, end) of the characters the group covers, whitespace at either end left out; equal for specials. */
  start: number;
  end: number;
  /** The covered text, or the special token's piece. */
  text: string;
  special: boolean;
}

export type Alignment =
  { ok: true; groups: AlignedGroup[]; groupOfA: number[]; groupOfB: number[]; oneSided: number } | { ok: false; reason: string };

export interface AlignNames {
  a: string;
  b: string;
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/u.test(c);

/** The non-whitespace core of [start, end); empty (start === end) for a whitespace-only or empty span. */
function core(text: string, start: number, end: number): [number, number] {
  let s = start;
  let e = end;
  while (s < e && isSpace(text[s])) s++;
  while (e > s && isSpace(text[e - 1])) e--;
  return [s, e];
}

interface Piece {
  side: 'a' | 'b';
  i: number;
  s: number;
  e: number;
}

function checkOffsets(text: string, tokens: readonly AlignToken[], name: string): string | undefined {
  for (const [i, t] of tokens.entries()) {
    if (t.special) continue;
    if (!Number.isInteger(t.start) || !Number.isInteger(t.end) || t.start < 0 || t.end > text.length || t.end < t.start) {
      return `${name}'s token ${i} ${JSON.stringify(t.text ?? '')} has character offsets ${t.start}–${t.end} outside the text (${text.length} characters)`;
    }
  }
  return undefined;
}

/**
 * Groups the tokens of two tokenizations of `text`. Tokens whose characters overlap (whitespace at their
 * ends ignored) share a group, transitively; a whitespace-only piece joins the group after it. Specials pair
 * up in order ([CLS] with [CLS], [SEP] with [SEP]). Fails, with one line naming the side, when offsets do not
 * fit the text or when fewer than half of the non-space characters are covered by both sides.
 */
export function alignTokens(
  text: string,
  a: readonly AlignToken[],
  b: readonly AlignToken[],
  names: AlignNames = { a: 'model A', b: 'model B' },
): Alignment {
  const bad = checkOffsets(text, a, names.a) ?? checkOffsets(text, b, names.b);
  if (bad) return { ok: false, reason: `Cannot align the two tokenizations: ${bad}.` };

  const pieces: Piece[] = [];
  const loose: Piece[] = []; // whitespace-only or empty pieces: they join the next group
  for (const [side, tokens] of [
    ['a', a],
    ['b', b],
  ] as const) {
    tokens.forEach((t, i) => {
      if (t.special) return;
      const [s, e] = core(text, t.start, t.end);
      (s < e ? pieces : loose).push({ side, i, s, e: s < e ? e : t.end });
    });
  }
  pieces.sort((x, y) => x.s - y.s || x.e - y.e);

  // Sweep: a piece that starts before the current group's end overlaps it (spans are half-open).
  const content: AlignedGroup[] = [];
  let cur: AlignedGroup | undefined;
  for (const p of pieces) {
    if (!cur || p.s >= cur.end) {
      cur = { a: [], b: [], start: p.s, end: p.e, text: '', special: false };
      content.push(cur);
    }
    cur[p.side].push(p.i);
    if (p.e > cur.end) cur.end = p.e;
  }
  for (const p of loose) {
    // The group that starts at or after the piece's end (SentencePiece's lone "▁" before "😀"), else the last.
    const g = content.find((c) => c.start >= p.e) ?? content[content.length - 1];
    if (g) g[p.side].push(p.i);
  }
  for (const g of content) {
    g.a.sort((x, y) => x - y);
    g.b.sort((x, y) => x - y);
    g.text = text.slice(g.start, g.end);
  }

  let shared = 0;
  let total = 0;
  let oneSided = 0;
  for (const g of content) {
    let chars = 0;
    for (let k = g.start; k < g.end; k++) if (!isSpace(text[k])) chars++;
    total += chars;
    if (g.a.length && g.b.length) shared += chars;
    else oneSided++;
  }
  if (total > 0 && shared * 2 < total) {
    const pct = Math.round((100 * (total - shared)) / total);
    return {
      ok: false,
      reason: `Cannot align ${names.a}'s and ${names.b}'s tokens on this text: ${pct}% of its characters are covered by one tokenizer only.`,
    };
  }

  const groups = placeSpecials(content, a, b);
  const groupOfA = new Array<number>(a.length).fill(-1);
  const groupOfB = new Array<number>(b.length).fill(-1);
  groups.forEach((g, k) => {
    for (const i of g.a) groupOfA[i] = k;
    for (const i of g.b) groupOfB[i] = k;
  });
  return { ok: true, groups, groupOfA, groupOfB, oneSided };
}

/** Inserts the specials, paired in order, where side A (else B) has them among its content tokens. */
function placeSpecials(content: AlignedGroup[], a: readonly AlignToken[], b: readonly AlignToken[]): AlignedGroup[] {
  const specialsA = a.flatMap((t, i) => (t.special ? [i] : []));
  const specialsB = b.flatMap((t, i) => (t.special ? [i] : []));
  const count = Math.max(specialsA.length, specialsB.length);
  // A special goes before the first content group holding a later token of its side.
  const slotOf = (i: number, side: 'a' | 'b') => {
    const k = content.findIndex((g) => g[side].some((t) => t > i));
    return k < 0 ? content.length : k;
  };
  const inserts: { slot: number; order: number; group: AlignedGroup }[] = [];
  for (let k = 0; k < count; k++) {
    const ia = specialsA[k];
    const ib = specialsB[k];
    // k < count: at least one side has a k-th special; A's places it when both do.
    const at =
      ia !== undefined
        ? { side: 'a' as const, i: ia, tok: a[ia] }
        : ib !== undefined
          ? { side: 'b' as const, i: ib, tok: b[ib] }
          : undefined;
    if (!at?.tok) continue;
    const { tok } = at;
    inserts.push({
      slot: slotOf(at.i, at.side),
      order: k,
      group: {
        a: ia !== undefined ? [ia] : [],
        b: ib !== undefined ? [ib] : [],
        start: tok.start,
        end: tok.start,
        text: tok.text ?? '',
        special: true,
      },
    });
  }
  const out: AlignedGroup[] = [];
  let next = 0;
  /** The inserts at the front of the queue that go in `slot` (every one left, when undefined). */
  const flush = (slot?: number) => {
    for (let ins = inserts[next]; ins && (slot === undefined || ins.slot === slot); ins = inserts[++next]) out.push(ins.group);
  };
  content.forEach((g, k) => {
    flush(k);
    out.push(g);
  });
  flush();
  return out;
}

/** Whether both sides are the same tokenization: same pieces at the same offsets (then cells compare 1:1). */
export function sameTokenization(a: readonly AlignToken[], b: readonly AlignToken[]): boolean {
  return (
    a.length === b.length &&
    a.every((t, i) => {
      const u = b[i];
      return u !== undefined && t.start === u.start && t.end === u.end && t.special === u.special && t.text === u.text;
    })
  );
}

/**
 * An `[n, n]` matrix pooled onto the aligned groups: cell (G, H) is the mean over G's tokens × H's tokens of
 * `side`. A group the side has no tokens in gives NaN cells.
 */
export function poolToGroups(values: Float32Array, n: number, groups: readonly AlignedGroup[], side: 'a' | 'b'): Float32Array {
  const g = groups.length;
  const out = new Float32Array(g * g);
  groups.forEach((row, r) => {
    const rows = row[side];
    groups.forEach((col, c) => {
      const cols = col[side];
      if (!rows.length || !cols.length) {
        out[r * g + c] = NaN;
        return;
      }
      let sum = 0;
      for (const i of rows) for (const j of cols) sum += values[i * n + j] ?? NaN;
      out[r * g + c] = sum / (rows.length * cols.length);
    });
  });
  return out;
}

/** Cell-wise a − b (NaN where either is NaN). */
export function subtract(a: Float32Array, b: Float32Array): Float32Array {
  if (a.length !== b.length) throw new RangeError(`cannot subtract matrices of ${a.length} and ${b.length} cells`);
  const out = new Float32Array(a.length);
  for (let k = 0; k < a.length; k++) out[k] = (a[k] ?? NaN) - (b[k] ?? NaN);
  return out;
}

/** The keys a set of query rows attends to most: the mean of those rows, its top `k` by magnitude. */
export function topKeys(values: Float32Array, n: number, rows: readonly number[], k: number): { j: number; weight: number }[] {
  if (!rows.length) return [];
  const mean = new Float64Array(n);
  for (const i of rows) for (let j = 0; j < n; j++) mean[j] = (mean[j] ?? 0) + (values[i * n + j] ?? NaN) / rows.length;
  const order = [...mean.entries()].filter(([, v]) => Number.isFinite(v));
  order.sort(([, x], [, y]) => Math.abs(y) - Math.abs(x));
  const top = order.slice(0, k);
  const first = top[0];
  const max = first ? Math.abs(first[1]) || 1 : 1;
  return top.map(([j, v]) => ({ j, weight: Math.abs(v) / max }));
}
