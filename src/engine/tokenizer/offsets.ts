// Byte offsets of the original UTF-8 → UTF-16 offsets of the original string.
import type { Utf8Text } from './utf8';

// Offsets b run 0…bytes.length: the maps have an entry for each (the last one is the end of the text).
export function byteStartToUtf16(t: Utf8Text, b: number): number {
  return t.byteToUtf16[b]!;
}

/** An end offset that falls inside a multi-byte character extends to the end of that character. */
export function byteEndToUtf16(t: Utf8Text, b: number): number {
  if (b >= t.bytes.length) return t.byteToUtf16[t.bytes.length]!;
  return (t.bytes[b]! & 0xc0) === 0x80 ? t.charEndUtf16[b]! : t.byteToUtf16[b]!;
}
