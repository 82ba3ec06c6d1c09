// SentencePiece's precompiled character map: a uint32 trie size, a darts-clone double-array trie whose values
// point into a blob of NUL-terminated replacement strings. Read exactly as normalizer.cc does.

export class PrecompiledCharsmap {
  private readonly units: Uint32Array;
  private readonly normalized: Uint8Array;

  /** Throws Error with a short reason when the blob is malformed. */
  constructor(blob: Uint8Array) {
    if (blob.length <= 4) throw new Error('precompiled charsmap too short');
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const trieSize = view.getUint32(0, true);
    if (trieSize >= blob.length || trieSize % 4 !== 0) throw new Error('precompiled charsmap has a bad trie size');
    const littleEndian = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
    if (littleEndian) {
      this.units = new Uint32Array(blob.slice(4, 4 + trieSize).buffer); // copy: the blob may be unaligned
    } else {
      this.units = new Uint32Array(trieSize / 4);
      for (let i = 0; i < this.units.length; i++) this.units[i] = view.getUint32(4 + i * 4, true);
    }
    this.normalized = blob.subarray(4 + trieSize);
  }

  /** Hugging Face's Precompiled::transform: the replacement of the FIRST (shortest) rule matching a prefix of
   *  `bytes`, or undefined when no rule matches. */
  firstMatch(bytes: Uint8Array): Uint8Array | undefined {
    const u = this.units;
    let nodePos = offsetOf(u[0]!);
    for (let i = 0; i < bytes.length; i++) {
      nodePos ^= bytes[i]!;
      if (nodePos >= u.length) return undefined;
      const unit = u[nodePos]!;
      if ((unit & 0x800000ff) >>> 0 !== bytes[i]) return undefined;
      nodePos ^= offsetOf(unit);
      if ((unit >>> 8) & 1) return this.replacementAt(u[nodePos]! & 0x7fffffff);
    }
    return undefined;
  }

  private replacementAt(value: number): Uint8Array {
    let stop = value;
    while (stop < this.normalized.length && this.normalized[stop] !== 0) stop++;
    return this.normalized.subarray(value, stop);
  }

  /** Longest rule matching bytes[pos..end): its length in bytes and the replacement, or length 0 if none.
   *  Like normalizer.cc, only the first 32 prefix matches are considered. */
  longestMatch(bytes: Uint8Array, pos: number, end: number): { length: number; replacement: Uint8Array } {
    const u = this.units;
    let nodePos = 0;
    let unit = u[0]!;
    nodePos ^= offsetOf(unit);
    let best = 0;
    let bestValue = 0;
    let found = 0;
    for (let i = pos; i < end; i++) {
      const c = bytes[i]!;
      nodePos ^= c;
      if (nodePos >= u.length) break;
      unit = u[nodePos]!;
      // label(): unit & ((1 << 31) | 0xFF) must equal the byte.
      if ((unit & 0x800000ff) >>> 0 !== c) break;
      nodePos ^= offsetOf(unit);
      if ((unit >>> 8) & 1) {
        if (found < 32) {
          best = i + 1 - pos;
          bestValue = u[nodePos]! & 0x7fffffff;
        }
        found++;
      }
    }
    if (best === 0) return { length: 0, replacement: EMPTY };
    return { length: best, replacement: this.replacementAt(bestValue) };
  }
}

const EMPTY = new Uint8Array(0);

function offsetOf(unit: number): number {
  return (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
}
