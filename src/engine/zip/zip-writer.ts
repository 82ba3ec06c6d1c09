// The one zip writer: stored entries (no compression), no encryption, UTF-8 names; zip64 records once an entry, an
// offset or the directory passes 4 GiB (a v3-large result at 1024 tokens is ~6 GiB). Enough for .npz, which numpy
// reads with or without compression. It streams entry by entry to a sink, so an archive never sits in memory whole.
// Written here rather than taken from npm: the extension ships no zip dependency, and this is a page of code.
import { crc32 } from '../../shared/crc32';
import { CENTRAL, END, END64, LOCAL, LOCATOR64, MAX16, MAX32, ZIP64_EXTRA } from './zip-format';

export interface ZipInput {
  name: string;
  data: Uint8Array;
}

// 1980-01-01 00:00 in DOS format: a fixed stamp keeps exports byte-identical for the same input.
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

interface Written {
  name: Uint8Array;
  crc: number;
  size: number;
  offset: number;
}

export interface ZipWriterOptions {
  /** Sizes and offsets above this use zip64 records (default: what 32 bits cannot hold; tests lower it). */
  zip64Above?: number;
}

/**
 * Lays out stored entries one at a time: `entry` and `finish` return the byte chunks to write next, in order, so
 * the caller streams them to a file (or joins them) and no archive sits in memory whole. An entry's data may come
 * in several parts (an .npy header, then the matrix).
 */
export class ZipWriter {
  private offset = 0;
  private readonly written: Written[] = [];
  private readonly limit: number;

  constructor(opts: ZipWriterOptions = {}) {
    this.limit = opts.zip64Above ?? MAX32 - 1;
  }

  entry(name: string, parts: readonly Uint8Array[]): Uint8Array[] {
    const nameBytes = new TextEncoder().encode(name);
    let crc = 0;
    let size = 0;
    for (const p of parts) {
      crc = crc32(p, crc);
      size += p.length;
    }
    const big = size > this.limit;
    const header = new Uint8Array(30 + nameBytes.length + (big ? 20 : 0));
    const dv = new DataView(header.buffer);
    dv.setUint32(0, LOCAL, true);
    dv.setUint16(4, big ? 45 : 20, true); // version needed: 4.5 for zip64, else 2.0
    dv.setUint16(6, 0x0800, true); // flags: UTF-8 names
    dv.setUint16(8, 0, true); // method: stored
    dv.setUint16(10, DOS_TIME, true);
    dv.setUint16(12, DOS_DATE, true);
    dv.setUint32(14, crc, true);
    dv.setUint32(18, big ? MAX32 : size, true);
    dv.setUint32(22, big ? MAX32 : size, true);
    dv.setUint16(26, nameBytes.length, true);
    dv.setUint16(28, big ? 20 : 0, true);
    header.set(nameBytes, 30);
    if (big) {
      const e = 30 + nameBytes.length;
      dv.setUint16(e, ZIP64_EXTRA, true);
      dv.setUint16(e + 2, 16, true);
      dv.setBigUint64(e + 4, BigInt(size), true);
      dv.setBigUint64(e + 12, BigInt(size), true);
    }
    this.written.push({ name: nameBytes, crc, size, offset: this.offset });
    this.offset += header.length + size;
    return [header, ...parts];
  }

  /** The central directory and the end records. */
  finish(): Uint8Array[] {
    const cdStart = this.offset;
    const records: Uint8Array[] = [];
    for (const w of this.written) {
      const bigSize = w.size > this.limit;
      const bigOffset = w.offset > this.limit;
      const extraLen = bigSize || bigOffset ? 4 + (bigSize ? 16 : 0) + (bigOffset ? 8 : 0) : 0;
      const r = new Uint8Array(46 + w.name.length + extraLen);
      const dv = new DataView(r.buffer);
      dv.setUint32(0, CENTRAL, true);
      dv.setUint16(4, extraLen ? 45 : 20, true); // made by
      dv.setUint16(6, extraLen ? 45 : 20, true); // needed
      dv.setUint16(8, 0x0800, true);
      dv.setUint16(10, 0, true);
      dv.setUint16(12, DOS_TIME, true);
      dv.setUint16(14, DOS_DATE, true);
      dv.setUint32(16, w.crc, true);
      dv.setUint32(20, bigSize ? MAX32 : w.size, true);
      dv.setUint32(24, bigSize ? MAX32 : w.size, true);
      dv.setUint16(28, w.name.length, true);
      dv.setUint16(30, extraLen, true);
      // comment, disk, internal attrs, external attrs: all 0
      dv.setUint32(42, bigOffset ? MAX32 : w.offset, true);
      r.set(w.name, 46);
      if (extraLen) {
        let e = 46 + w.name.length;
        dv.setUint16(e, ZIP64_EXTRA, true);
        dv.setUint16(e + 2, extraLen - 4, true);
        e += 4;
        if (bigSize) {
          dv.setBigUint64(e, BigInt(w.size), true);
          dv.setBigUint64(e + 8, BigInt(w.size), true);
          e += 16;
        }
        if (bigOffset) dv.setBigUint64(e, BigInt(w.offset), true);
      }
      records.push(r);
    }
    const cdSize = records.reduce((a, r) => a + r.length, 0);
    const count = this.written.length;
    const big = cdStart > this.limit || cdSize > this.limit || count >= MAX16;
    if (big) {
      const z = new Uint8Array(56 + 20);
      const dv = new DataView(z.buffer);
      dv.setUint32(0, END64, true);
      dv.setBigUint64(4, 44n, true); // size of the rest of this record
      dv.setUint16(12, 45, true);
      dv.setUint16(14, 45, true);
      dv.setBigUint64(24, BigInt(count), true);
      dv.setBigUint64(32, BigInt(count), true);
      dv.setBigUint64(40, BigInt(cdSize), true);
      dv.setBigUint64(48, BigInt(cdStart), true);
      dv.setUint32(56, LOCATOR64, true);
      dv.setBigUint64(64, BigInt(cdStart + cdSize), true); // where the zip64 end record starts
      dv.setUint32(72, 1, true); // total disks
      records.push(z);
    }
    const end = new Uint8Array(22);
    const dv = new DataView(end.buffer);
    dv.setUint32(0, END, true);
    dv.setUint16(8, big ? MAX16 : count, true);
    dv.setUint16(10, big ? MAX16 : count, true);
    dv.setUint32(12, big ? MAX32 : cdSize, true);
    dv.setUint32(16, big ? MAX32 : cdStart, true);
    records.push(end);
    return records;
  }
}

/** A whole archive in memory (small archives; large ones go through ZipWriter to a file). */
export function writeZip(entries: readonly ZipInput[], opts: ZipWriterOptions = {}): Uint8Array {
  const w = new ZipWriter(opts);
  return concatBytes([...entries.flatMap((e) => w.entry(e.name, [e.data])), ...w.finish()]);
}

/** The parts one after the other in one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let p = 0;
  for (const part of parts) {
    out.set(part, p);
    p += part.length;
  }
  return out;
}
