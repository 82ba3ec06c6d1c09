// SentencePiece's Normalizer::Normalize (normalizer.cc), byte for byte, with the norm_to_orig alignment that
// lets every normalized byte point back to a byte of the original UTF-8 text.
import { PrecompiledCharsmap } from './charsmap';
import type { SpmNormalizerSpec } from './spm-model';
import { utf8CharLen } from './utf8';

const SPACE_SYMBOL = [0xe2, 0x96, 0x81]; // "▁"
const REPLACEMENT_CHAR = new Uint8Array([0xef, 0xbf, 0xbd]);

export interface Normalized {
  bytes: Uint8Array;
  /** normToOrig[i] = byte offset in the original text for normalized byte i; one extra entry at the end. */
  normToOrig: Int32Array;
}

/** Longest user-defined symbol at a position (the library's PrefixMatcher); 0 when none. */
export type PrefixMatcher = (bytes: Uint8Array, pos: number, end: number) => number;

export class SpmNormalizer {
  private readonly charsmap: PrecompiledCharsmap | undefined;

  constructor(
    private readonly spec: SpmNormalizerSpec,
    private readonly treatWhitespaceAsSuffix: boolean,
    private readonly userDefined: PrefixMatcher | undefined,
  ) {
    this.charsmap = spec.precompiledCharsmap.length > 0 ? new PrecompiledCharsmap(spec.precompiledCharsmap) : undefined;
  }

  /** NormalizePrefix: the normalized form of the next unit of input and how many input bytes it consumes. */
  private normalizePrefix(input: Uint8Array, pos: number): { out: Uint8Array; consumed: number } {
    const end = input.length;
    if (this.userDefined) {
      const n = this.userDefined(input, pos, end);
      if (n > 0) return { out: input.subarray(pos, pos + n), consumed: n };
    }
    if (this.charsmap) {
      const m = this.charsmap.longestMatch(input, pos, end);
      if (m.length > 0) return { out: m.replacement, consumed: m.length };
    }
    const len = validCharLen(input, pos);
    if (len === 0) return { out: REPLACEMENT_CHAR, consumed: 1 };
    return { out: input.subarray(pos, pos + len), consumed: len };
  }

  normalize(input: Uint8Array): Normalized {
    const spec = this.spec;
    const out: number[] = [];
    const n2o: number[] = [];
    let pos = 0;
    let consumed = 0;
    const isSpaceOnly = (b: Uint8Array) => b.length === 1 && b[0] === 0x20;

    // Ignores heading space.
    if (spec.removeExtraWhitespaces) {
      while (pos < input.length) {
        const p = this.normalizePrefix(input, pos);
        if (!isSpaceOnly(p.out)) break;
        pos += p.consumed;
        consumed += p.consumed;
      }
    }
    if (pos >= input.length) return { bytes: new Uint8Array(0), normToOrig: Int32Array.of(consumed) };

    const addWs = () => {
      if (spec.escapeWhitespaces) {
        for (const b of SPACE_SYMBOL) {
          out.push(b);
          n2o.push(consumed);
        }
      } else {
        out.push(0x20);
        n2o.push(consumed);
      }
    };
    if (!this.treatWhitespaceAsSuffix && spec.addDummyPrefix) addWs();

    let isPrevSpace = spec.removeExtraWhitespaces;
    while (pos < input.length) {
      const p = this.normalizePrefix(input, pos);
      let sp = p.out;
      if (isPrevSpace) {
        let k = 0;
        while (k < sp.length && sp[k] === 0x20) k++;
        sp = sp.subarray(k);
      }
      if (sp.length > 0) {
        for (let k = 0; k < sp.length; k++) {
          if (spec.escapeWhitespaces && sp[k] === 0x20) {
            for (const b of SPACE_SYMBOL) {
              out.push(b);
              n2o.push(consumed);
            }
          } else {
            out.push(sp[k]!);
            n2o.push(consumed);
          }
        }
        isPrevSpace = sp[sp.length - 1] === 0x20;
      }
      consumed += p.consumed;
      pos += p.consumed;
      if (!spec.removeExtraWhitespaces) isPrevSpace = false;
    }

    // Ignores trailing space.
    if (spec.removeExtraWhitespaces) {
      const space = spec.escapeWhitespaces ? SPACE_SYMBOL : [0x20];
      const endsWithSpace = () => {
        if (out.length < space.length) return false;
        for (let k = 0; k < space.length; k++) if (out[out.length - space.length + k] !== space[k]) return false;
        return true;
      };
      while (endsWithSpace()) {
        const length = out.length - space.length;
        consumed = n2o[length]!; // length < out.length = n2o.length
        out.length = length;
        n2o.length = length;
      }
    }
    if (this.treatWhitespaceAsSuffix && spec.addDummyPrefix) addWs();
    n2o.push(consumed);
    return { bytes: Uint8Array.from(out), normToOrig: Int32Array.from(n2o) };
  }
}

/** Length of the valid UTF-8 character at pos, or 0 when the bytes there are malformed. */
function validCharLen(b: Uint8Array, pos: number): number {
  const len = utf8CharLen(b[pos]!);
  if (len === 1) return b[pos]! < 0x80 ? 1 : 0;
  if (pos + len > b.length) return 0;
  for (let k = 1; k < len; k++) if ((b[pos + k]! & 0xc0) !== 0x80) return 0;
  return len;
}
