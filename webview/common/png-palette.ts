// A minimal PNG encoder for a large map inside an SVG figure: 8-bit palette (the colour table's 256 entries),
// stored (uncompressed) deflate blocks, so one byte a cell — a 500×500 map is ~340 KB of base64 instead of
// ~10 MB of rectangles. Pure: no DOM, no zlib, runs in the webview and under node.
import { crc32 } from '../../src/shared/crc32';

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let k = 0; k < 4; k++) out[4 + k] = type.charCodeAt(k);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** zlib stream of `raw` in stored blocks (≤ 65,535 bytes each), with its Adler-32. */
function zlibStored(raw: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(raw.length / 65535));
  const out = new Uint8Array(2 + raw.length + blocks * 5 + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let b = 0; b < blocks; b++) {
    const part = raw.subarray(b * 65535, Math.min(raw.length, (b + 1) * 65535));
    out[at] = b === blocks - 1 ? 1 : 0;
    out[at + 1] = part.length & 0xff;
    out[at + 2] = part.length >>> 8;
    out[at + 3] = ~part.length & 0xff;
    out[at + 4] = (~part.length >>> 8) & 0xff;
    out.set(part, at + 5);
    at += 5 + part.length;
  }
  let a = 1;
  let s = 0;
  for (const x of raw) {
    a = (a + x) % 65521;
    s = (s + a) % 65521;
  }
  new DataView(out.buffer).setUint32(at, ((s << 16) | a) >>> 0);
  return out;
}

/** A palette PNG of `width × height` indices into `lut` (RGBA, 256 entries). */
export function palettePng(indices: Uint8Array, width: number, height: number, lut: Uint8ClampedArray): Uint8Array {
  if (indices.length !== width * height) throw new RangeError(`palettePng: ${indices.length} indices for ${width}×${height}`);
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 3, 0, 0, 0], 8);
  const plte = new Uint8Array(256 * 3);
  for (let k = 0; k < 256; k++) plte.set([lut[k * 4] ?? 0, lut[k * 4 + 1] ?? 0, lut[k * 4 + 2] ?? 0], k * 3);
  const raw = new Uint8Array(height * (width + 1));
  for (let y = 0; y < height; y++) raw.set(indices.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  const parts = [
    Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('PLTE', plte),
    chunk('IDAT', zlibStored(raw)),
    chunk('IEND', new Uint8Array(0)),
  ];
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

/** Base64 of bytes (btoa is in browsers and in node ≥ 16). */
export function base64(bytes: Uint8Array): string {
  let s = '';
  for (let k = 0; k < bytes.length; k += 0x8000) s += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(s);
}
