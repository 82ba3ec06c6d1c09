import type { TensorData } from '../types';

/** Converts a checkpoint tensor to float32 little-endian bytes (F16 and BF16 widen exactly). */
export function toFloat32Bytes(t: TensorData): Uint8Array {
  const src = t.read();
  if (t.dtype === 'float32') return src;
  const count = src.byteLength / 2;
  const out = new Float32Array(count);
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  if (t.dtype === 'bfloat16') {
    const u = new Uint32Array(out.buffer);
    for (let k = 0; k < count; k++) u[k] = view.getUint16(2 * k, true) << 16;
  } else {
    for (let k = 0; k < count; k++) out[k] = halfToFloat(view.getUint16(2 * k, true));
  }
  return new Uint8Array(out.buffer);
}

export function toFloat32(t: TensorData): Float32Array {
  const b = toFloat32Bytes(t);
  if (b.byteOffset % 4 === 0) return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  return new Float32Array(b.slice().buffer);
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
