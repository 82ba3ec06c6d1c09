// Text being normalized / pre-tokenized for a tokenizer.json pipeline, where every UTF-16 unit remembers the
// [start, end) range of the original text it came from.

export class AlignedText {
  constructor(
    readonly text: string,
    readonly os: readonly number[],
    readonly oe: readonly number[],
  ) {}

  static of(text: string, offset = 0): AlignedText {
    const os: number[] = [];
    const oe: number[] = [];
    for (let i = 0; i < text.length;) {
      const units = codePointUnits(text, i);
      for (let k = 0; k < units; k++) {
        os.push(offset + i);
        oe.push(offset + i + units);
      }
      i += units;
    }
    return new AlignedText(text, os, oe);
  }

  slice(start: number, end: number): AlignedText {
    return new AlignedText(this.text.slice(start, end), this.os.slice(start, end), this.oe.slice(start, end));
  }

  /** Original range of units [start, end); an empty range sits at the original position of `start`. */
  origRange(start: number, end: number): [number, number] {
    if (end > start) return [this.os[start]!, this.oe[end - 1]!];
    const at = this.os[start] ?? this.oe[this.oe.length - 1] ?? 0;
    return [at, at];
  }

  /** Replaces each match of `re` (global) with `content`; the new units span the matched units' range. */
  replace(re: RegExp, content: string): AlignedText {
    let text = '';
    const os: number[] = [];
    const oe: number[] = [];
    let last = 0;
    const copy = (from: number, to: number) => {
      text += this.text.slice(from, to);
      for (let i = from; i < to; i++) {
        os.push(this.os[i]!);
        oe.push(this.oe[i]!);
      }
    };
    for (const m of this.text.matchAll(re)) {
      const s = m.index;
      const e = s + m[0].length;
      if (e === s) continue;
      copy(last, s);
      const [a, b] = this.origRange(s, e);
      text += content;
      for (let k = 0; k < content.length; k++) {
        os.push(a);
        oe.push(b);
      }
      last = e;
    }
    copy(last, this.text.length);
    return new AlignedText(text, os, oe);
  }

  /** Rewrites text piece by piece (code points or graphemes, as `split` yields); output keeps each piece's range. */
  mapPieces(pieces: Iterable<[number, number]>, fn: (piece: string) => string): AlignedText {
    let text = '';
    const os: number[] = [];
    const oe: number[] = [];
    for (const [s, e] of pieces) {
      const out = fn(this.text.slice(s, e));
      const [a, b] = this.origRange(s, e);
      const same = out === this.text.slice(s, e);
      text += out;
      for (let k = 0; k < out.length; k++) {
        // same: unit s + k is one of [s, e), which this text has.
        os.push(same ? this.os[s + k]! : a);
        oe.push(same ? this.oe[s + k]! : b);
      }
    }
    return new AlignedText(text, os, oe);
  }

  prepend(s: string): AlignedText {
    const at = this.os[0] ?? 0;
    return new AlignedText(
      s + this.text,
      [...Array<number>(s.length).fill(at), ...this.os],
      [...Array<number>(s.length).fill(at), ...this.oe],
    );
  }
}

export function codePointUnits(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

export function* codePointRanges(text: string): Generator<[number, number]> {
  for (let i = 0; i < text.length;) {
    const n = codePointUnits(text, i);
    yield [i, i + n];
    i += n;
  }
}

// Created on first use: building an Intl.Segmenter costs tens of milliseconds of ICU start-up.
let segmenter: Intl.Segmenter | undefined;

/** [start, end) UTF-16 ranges of the text's grapheme clusters (Unicode normalization never crosses them). */
export function* graphemeRanges(text: string): Generator<[number, number]> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const g of segmenter.segment(text)) yield [g.index, g.index + g.segment.length];
}
