// Minimal zip: stored entries (no compression), no zip64, no encryption. Enough for .npz, which numpy reads
// with or without compression. The reader accepts stored entries only and checks every CRC.
import { LensError } from '../../engine/errors';
import { crc32 } from './crc32';

export interface ZipEntry {
  name: string;
  data: Uint8Array;
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
// 1980-01-01 00:00 in DOS format: a fixed stamp keeps exports byte-identical for the same input.
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  const names = entries.map((e) => new TextEncoder().encode(e.name));
  let size = 22;
  entries.forEach((e, k) => (size += 30 + 46 + 2 * names[k].length + e.data.length));
  if (size > 0xffffffff || entries.length > 0xffff) {
    throw new LensError('export: the archive would exceed 4 GiB (zip64 is not supported); export fewer layers with --layers');
  }
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  const offsets: number[] = [];
  const crcs = entries.map((e) => crc32(e.data));
  let p = 0;
  entries.forEach((e, k) => {
    offsets.push(p);
    dv.setUint32(p, LOCAL, true);
    dv.setUint16(p + 4, 20, true); // version needed: 2.0
    dv.setUint16(p + 6, 0x0800, true); // flags: UTF-8 names
    dv.setUint16(p + 8, 0, true); // method: stored
    dv.setUint16(p + 10, DOS_TIME, true);
    dv.setUint16(p + 12, DOS_DATE, true);
    dv.setUint32(p + 14, crcs[k], true);
    dv.setUint32(p + 18, e.data.length, true);
    dv.setUint32(p + 22, e.data.length, true);
    dv.setUint16(p + 26, names[k].length, true);
    dv.setUint16(p + 28, 0, true);
    out.set(names[k], p + 30);
    out.set(e.data, p + 30 + names[k].length);
    p += 30 + names[k].length + e.data.length;
  });
  const cdStart = p;
  entries.forEach((e, k) => {
    dv.setUint32(p, CENTRAL, true);
    dv.setUint16(p + 4, 20, true); // made by
    dv.setUint16(p + 6, 20, true);
    dv.setUint16(p + 8, 0x0800, true);
    dv.setUint16(p + 10, 0, true);
    dv.setUint16(p + 12, DOS_TIME, true);
    dv.setUint16(p + 14, DOS_DATE, true);
    dv.setUint32(p + 16, crcs[k], true);
    dv.setUint32(p + 20, e.data.length, true);
    dv.setUint32(p + 24, e.data.length, true);
    dv.setUint16(p + 28, names[k].length, true);
    // extra, comment, disk, internal attrs, external attrs: all 0
    dv.setUint32(p + 42, offsets[k], true);
    out.set(names[k], p + 46);
    p += 46 + names[k].length;
  });
  dv.setUint32(p, END, true);
  dv.setUint16(p + 8, entries.length, true);
  dv.setUint16(p + 10, entries.length, true);
  dv.setUint32(p + 12, p - cdStart, true);
  dv.setUint32(p + 16, cdStart, true);
  return out;
}

/** Entries of a zip by name (views into `bytes`). `source` names the file in error messages. */
export function readZip(bytes: Uint8Array, source = 'the archive'): Map<string, Uint8Array> {
  const bad = (why: string) => new LensError(`${source}: not a readable .npz/zip (${why}); export it again with deberta-lens --format npz`, 'corrupt');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let p = bytes.length - 22; p >= Math.max(0, bytes.length - 22 - 0xffff); p--) {
    if (dv.getUint32(p, true) === END) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw bad('no end-of-central-directory record');
  const count = dv.getUint16(eocd + 10, true);
  let p = dv.getUint32(eocd + 16, true);
  const out = new Map<string, Uint8Array>();
  for (let k = 0; k < count; k++) {
    if (p + 46 > bytes.length || dv.getUint32(p, true) !== CENTRAL) throw bad('broken central directory');
    const method = dv.getUint16(p + 10, true);
    const crc = dv.getUint32(p + 16, true);
    const csize = dv.getUint32(p + 20, true);
    const usize = dv.getUint32(p + 24, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    const local = dv.getUint32(p + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(p + 46, p + 46 + nameLen));
    if (method !== 0 || csize !== usize) throw bad(`entry ${name} is compressed; only stored entries are supported`);
    if (local + 30 > bytes.length || dv.getUint32(local, true) !== LOCAL) throw bad(`entry ${name} has no local header`);
    const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
    if (start + usize > bytes.length) throw bad(`entry ${name} is truncated`);
    const data = bytes.subarray(start, start + usize);
    if (crc32(data) !== crc) throw bad(`CRC mismatch in ${name}`);
    out.set(name, data);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}
