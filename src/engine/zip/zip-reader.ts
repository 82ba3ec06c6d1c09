// The one zip reader: PyTorch checkpoints (torch.save's zip), .npz exports and VSIX packages all go through it.
// It reads the central directory (zip64 included) from a random-access source and locates each entry's data
// without loading the archive. Every size, offset and count in the file is a claim to check, not a fact: records
// must lie inside the file, zip64 values must be safe integers, an entry's data must end before the file does,
// and an entry's declared size bounds what inflating it may produce.
// Written here rather than taken from npm: readers there either load the whole archive or trust its sizes, and
// this one is small, needs no dependency in the VSIX, and keeps each caller's error messages.
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import type { LensError } from '../errors';
import { CENTRAL, END, END64, LOCAL, LOCATOR64, MAX16, MAX32, ZIP64_EXTRA } from './zip-format';

/** Where the archive's bytes come from: a file read by range, or bytes in memory. */
export interface ZipSource {
  readonly size: number;
  /** `length` bytes from `offset` (both already checked against `size`). */
  read(offset: number, length: number): Uint8Array;
}

export function bytesSource(bytes: Uint8Array): ZipSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** A file read by range; `readRange` reports a file that cannot be opened or ends early in the caller's words. */
export function fileSource(size: number, readRange: (offset: number, length: number) => Uint8Array): ZipSource {
  return { size, read: readRange };
}

/** A whole file, read by range with plain fs calls. */
export function openFileSource(file: string): ZipSource {
  const size = fs.statSync(file).size;
  return fileSource(size, (offset, length) => {
    const out = new Uint8Array(length);
    const fd = fs.openSync(file, 'r');
    try {
      for (let done = 0; done < length;) {
        const n = fs.readSync(fd, out, done, length - done, offset + done);
        if (n === 0) break;
        done += n;
      }
    } finally {
      fs.closeSync(fd);
    }
    return out;
  });
}

export interface ZipEntry {
  name: string;
  /** General-purpose flags (bit 0: encrypted). */
  flags: number;
  /** 0 = stored, 8 = deflate. */
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** Absolute offset of the entry's (possibly compressed) bytes in the archive. */
  dataOffset: number;
}

export interface ZipReadOptions {
  /** Builds the error for a damaged or lying archive; `what` says what is wrong. */
  corrupt: (what: string) => LensError;
  /** The caller's own refusals of one entry (encryption, a method, a size), checked as the entry is read, before
   *  its local header: an archive is refused at its first bad entry. */
  check?: (entry: Omit<ZipEntry, 'dataOffset'>) => void;
}

/** Every entry of the archive, in central-directory order. */
export function readZipEntries(src: ZipSource, opts: ZipReadOptions): ZipEntry[] {
  const { corrupt } = opts;
  const read = (offset: number, length: number, what: string): Uint8Array => {
    if (offset < 0 || length < 0 || offset + length > src.size) throw corrupt(`${what} lies outside the file`);
    return src.read(offset, length);
  };
  const safeNumber = (v: bigint, what: string): number => {
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt(`${what} is out of range`);
    return Number(v);
  };
  // The end record sits in the last 22 + 65535 (comment) bytes.
  const tailLen = Math.min(src.size, 22 + MAX16);
  const tailStart = src.size - tailLen;
  const tail = view(read(tailStart, tailLen, 'end of the archive'));
  let eocd = -1;
  for (let p = tail.byteLength - 22; p >= 0; p--) {
    if (tail.getUint32(p, true) === END) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw corrupt('no end-of-central-directory record; the file may be truncated');
  let count = tail.getUint16(eocd + 10, true);
  let cdSize = tail.getUint32(eocd + 12, true);
  let cdOffset = tail.getUint32(eocd + 16, true);
  if (count === MAX16 || cdSize === MAX32 || cdOffset === MAX32) {
    const locAt = eocd - 20;
    if (locAt < 0 || tail.getUint32(locAt, true) !== LOCATOR64) throw corrupt('zip64 locator missing');
    const eocd64Offset = safeNumber(tail.getBigUint64(locAt + 8, true), 'zip64 record offset');
    const rec = view(read(eocd64Offset, 56, 'zip64 end record'));
    if (rec.getUint32(0, true) !== END64) throw corrupt('zip64 end record missing');
    count = safeNumber(rec.getBigUint64(32, true), 'entry count');
    cdSize = safeNumber(rec.getBigUint64(40, true), 'central directory size');
    cdOffset = safeNumber(rec.getBigUint64(48, true), 'central directory offset');
  }
  const cdBytes = read(cdOffset, cdSize, 'central directory');
  const cd = view(cdBytes);
  const decoder = new TextDecoder();
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + 46 > cd.byteLength || cd.getUint32(p, true) !== CENTRAL) throw corrupt('bad central directory entry');
    const flags = cd.getUint16(p + 8, true);
    const method = cd.getUint16(p + 10, true);
    const crc = cd.getUint32(p + 16, true);
    let compressedSize = cd.getUint32(p + 20, true);
    let size = cd.getUint32(p + 24, true);
    const nameLen = cd.getUint16(p + 28, true);
    const extraLen = cd.getUint16(p + 30, true);
    const commentLen = cd.getUint16(p + 32, true);
    let localOffset = cd.getUint32(p + 42, true);
    if (p + 46 + nameLen + extraLen + commentLen > cd.byteLength) throw corrupt('central directory entry runs past its end');
    const name = decoder.decode(cdBytes.subarray(p + 46, p + 46 + nameLen));
    // zip64 extra field (id 1): the 64-bit values appear in this order, only for fields saturated above.
    let e = p + 46 + nameLen;
    const extraEnd = e + extraLen;
    while (e + 4 <= extraEnd) {
      const id = cd.getUint16(e, true);
      const len = cd.getUint16(e + 2, true);
      if (id === ZIP64_EXTRA) {
        let q = e + 4;
        const next = (what: string) => {
          if (q + 8 > e + 4 + len) throw corrupt(`zip64 field too short for ${what}`);
          const v = safeNumber(cd.getBigUint64(q, true), what);
          q += 8;
          return v;
        };
        if (size === MAX32) size = next('size');
        if (compressedSize === MAX32) compressedSize = next('compressed size');
        if (localOffset === MAX32) localOffset = next('local header offset');
      }
      e += 4 + len;
    }
    opts.check?.({ name, flags, method, crc, compressedSize, size });
    const local = view(read(localOffset, 30, `local header of ${name}`));
    if (local.getUint32(0, true) !== LOCAL) throw corrupt(`local header of ${name} missing`);
    const dataOffset = localOffset + 30 + local.getUint16(26, true) + local.getUint16(28, true);
    if (dataOffset + compressedSize > src.size) {
      throw corrupt(`entry ${name} ends at byte ${dataOffset + compressedSize}, past the end of the file (${src.size})`);
    }
    entries.push({ name, flags, method, crc, compressedSize, size, dataOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** What a deflated entry may inflate to: 64 MiB plus 32× its compressed size. A zip bomb inflates a
 *  thousand-fold; real archives (weights, a package's code) a few-fold. */
export function inflateLimit(compressedSize: number): number {
  return 64 * 2 ** 20 + 32 * compressedSize;
}

/** An entry's uncompressed bytes: stored ones as they are (a view for a bytes source), deflated ones inflated to
 *  at most their declared size. Other methods are the caller's to refuse before this. */
export function readZipEntry(src: ZipSource, entry: ZipEntry, corrupt: (what: string) => LensError): Uint8Array {
  const raw = src.read(entry.dataOffset, entry.compressedSize);
  if (entry.method === 0) return raw;
  if (entry.size > inflateLimit(entry.compressedSize)) {
    throw corrupt(
      `entry ${entry.name} claims to inflate from ${entry.compressedSize} to ${entry.size} bytes, over the limit of ${inflateLimit(entry.compressedSize)}`,
    );
  }
  let out: Buffer;
  try {
    // The declared size bounds the output: inflateRawSync alone would grow its buffer without limit.
    out = zlib.inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.size) });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw corrupt(`entry ${entry.name} inflates to more than the ${entry.size} bytes it declares`);
    throw corrupt(`entry ${entry.name} does not inflate`);
  }
  if (out.length !== entry.size) throw corrupt(`entry ${entry.name} inflates to ${out.length} bytes, not ${entry.size}`);
  return out;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}
