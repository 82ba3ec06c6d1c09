// IEEE 754 half precision (binary16) for matrices that are only painted: half the bytes of float32 through the
// webview's message channel, and 11 significant bits, which no colour ramp of 256 steps can tell apart (linear,
// log or per-row). Numbers a reader sees come from float32 payloads, never from these.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary16 bits of `v`, rounded to nearest even; beyond ±65504 → ±Infinity, NaN stays NaN. */
export function toHalfBits(v: number): number {
  f32[0] = v;
  const x = u32[0] ?? 0; // one element, just written
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf, NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // too large for a half
  if (e <= 0) {
    if (e < -10) return sign; // below half the smallest subnormal
    // Subnormal half: shift the mantissa (with its implicit 1) into place, rounding to nearest even.
    const m = mant | 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let r = m >>> shift;
    if (rest > half || (rest === half && r & 1)) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && r & 1)) r++; // may carry into the exponent, up to Infinity: right
  return sign | r;
}

// Every half's float value, built once: decoding is then one table read per cell.
let table: Float32Array | undefined;
function halfTable(): Float32Array {
  if (table) return table;
  table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >>> 10) & 0x1f;
    const m = h & 0x3ff;
    table[h] = e === 0 ? s * m * 2 ** -24 : e === 0x1f ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return table;
}

/** float32 values → a fresh buffer of their binary16 bits (2 bytes each). */
export function encodeHalf(values: Float32Array): ArrayBuffer {
  const out = new Uint16Array(values.length);
  for (let k = 0; k < values.length; k++) out[k] = toHalfBits(values[k] ?? NaN);
  return out.buffer;
}

/** binary16 bits (a buffer, or a typed view of one) → float32 values; the count must be `expectedLength`. */
export function decodeHalf(buf: ArrayBuffer | ArrayBufferView, expectedLength: number): Float32Array {
  const bits = ArrayBuffer.isView(buf)
    ? new Uint16Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength))
    : new Uint16Array(buf);
  if (bits.length !== expectedLength) throw new RangeError(`payload has ${bits.length} halves, expected ${expectedLength}`);
  const t = halfTable();
  const out = new Float32Array(bits.length);
  // Every 16-bit value indexes the 65536-entry table.
  for (let k = 0; k < bits.length; k++) out[k] = t[bits[k] ?? 0] ?? NaN;
  return out;
}
