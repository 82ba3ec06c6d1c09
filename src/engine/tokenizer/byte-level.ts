// GPT-2's byte-level pre-tokenization: the split regex and the byte → printable-character table.

/** GPT-2's pattern (also Hugging Face's ByteLevel pre-tokenizer with use_regex). */
export const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** bytes_to_unicode(): printable bytes map to themselves, the rest to U+0100 onwards. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const table = new Array<string>(256);
  for (const b of bs) table[b] = String.fromCharCode(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (table[b] === undefined) table[b] = String.fromCharCode(256 + n++);
  return table;
})();

/** The printable character standing for byte `b` (0…255: the table has every byte). */
export function byteChar(b: number): string {
  return BYTE_TO_CHAR[b]!;
}

/** Pre-tokens of `text` as [start, end) UTF-16 ranges. */
export function splitGpt2(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(GPT2_SPLIT)) {
    if (m[0].length > 0) out.push([m.index, m.index + m[0].length]);
  }
  return out;
}
