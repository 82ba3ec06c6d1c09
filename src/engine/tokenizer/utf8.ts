// UTF-8 encoding that remembers where each byte came from, so byte offsets (what SentencePiece and byte-level
// BPE work in) map back to UTF-16 positions of the original string (what VS Code uses).

export interface Utf8Text {
  bytes: Uint8Array;
  /** byteToUtf16[b] = UTF-16 index of the character holding byte b; byteToUtf16[bytes.length] = text.length. */
  byteToUtf16: Int32Array;
  /** charEndUtf16[b] = UTF-16 index just past the character holding byte b. */
  charEndUtf16: Int32Array;
}

export function encodeUtf8WithMap(text: string): Utf8Text {
  const bytes = new Uint8Array(text.length * 3);
  const toU16 = new Int32Array(text.length * 3 + 1);
  const endU16 = new Int32Array(text.length * 3 + 1);
  let n = 0;
  for (let i = 0; i < text.length;) {
    let cp = text.charCodeAt(i);
    let units = 1;
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        units = 2;
      }
    }
    // A lone surrogate cannot be encoded; like TextEncoder, it becomes U+FFFD.
    if (units === 1 && cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    const start = n;
    if (cp < 0x80) bytes[n++] = cp;
    else if (cp < 0x800) {
      bytes[n++] = 0xc0 | (cp >> 6);
      bytes[n++] = 0x80 | (cp & 63);
    } else if (cp < 0x10000) {
      bytes[n++] = 0xe0 | (cp >> 12);
      bytes[n++] = 0x80 | ((cp >> 6) & 63);
      bytes[n++] = 0x80 | (cp & 63);
    } else {
      bytes[n++] = 0xf0 | (cp >> 18);
      bytes[n++] = 0x80 | ((cp >> 12) & 63);
      bytes[n++] = 0x80 | ((cp >> 6) & 63);
      bytes[n++] = 0x80 | (cp & 63);
    }
    for (let b = start; b < n; b++) {
      toU16[b] = i;
      endU16[b] = i + units;
    }
    i += units;
  }
  toU16[n] = text.length;
  endU16[n] = text.length;
  return { bytes: bytes.subarray(0, n), byteToUtf16: toU16.subarray(0, n + 1), charEndUtf16: endU16.subarray(0, n + 1) };
}

/** Length in bytes of the UTF-8 character starting with byte `b` (1 for a stray continuation byte). */
export function utf8CharLen(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xf0 && b < 0xf8) return 4;
  if (b >= 0xe0) return b < 0xf0 ? 3 : 1;
  if (b >= 0xc0) return 2;
  return 1;
}

const decoder = new TextDecoder('utf-8');
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
const encoder = new TextEncoder();
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}
