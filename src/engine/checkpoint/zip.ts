// A minimal zip reader for PyTorch checkpoints: reads the central directory (zip64 included) and locates each
// entry's data without loading the archive. torch.save writes stored (uncompressed) entries, 64-byte aligned;
// deflated entries are accepted too but can only be read whole.
import * as zlib from 'node:zlib';
import { LensError } from '../errors';
import { readRange } from './tensor';

export interface ZipEntry {
  name: string;
  /** 0 = stored, 8 = deflate. */
  method: number;
  compressedSize: number;
  size: number;
  /** Absolute offset of the entry's (possibly compressed) bytes in the archive. */
  dataOffset: number;
}

const EOCD_SIG = 0x06054b50;
const EOCD64_LOCATOR_SIG = 0x07064b50;
const EOCD64_SIG = 0x06064b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;

/** What a deflated entry may inflate to: 64 MiB plus 32× its compressed size. torch.save never deflates; a
 *  hand-made archive of weights compresses a few-fold at most, while a zip bomb inflates a thousand-fold. */
export function inflateLimit(compressedSize: number): number {
  return 64 * 2 ** 20 + 32 * compressedSize;
}

export class ZipArchive {
  readonly entries = new Map<string, ZipEntry>();

  constructor(
    readonly file: string,
    readonly size: number,
  ) {
    this.readCentralDirectory();
  }

  private corrupt(what: string): LensError {
    return new LensError(`${this.file}: not a valid PyTorch zip checkpoint (${what}); re-download or re-save it.`, 'corrupt');
  }

  private readCentralDirectory(): void {
    // The end record sits in the last 22 + 65535 (comment) bytes.
    const tailLen = Math.min(this.size, 22 + 65535);
    const tailStart = this.size - tailLen;
    const tail = Buffer.from(readRange(this.file, tailStart, tailLen));
    let eocd = -1;
    for (let p = tail.length - 22; p >= 0; p--) {
      if (tail.readUInt32LE(p) === EOCD_SIG) {
        eocd = p;
        break;
      }
    }
    if (eocd < 0) throw this.corrupt('no end-of-central-directory record; the file may be truncated');
    let count = tail.readUInt16LE(eocd + 10);
    let cdSize = tail.readUInt32LE(eocd + 12);
    let cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const locAt = eocd - 20;
      if (locAt < 0 || tail.readUInt32LE(locAt) !== EOCD64_LOCATOR_SIG) throw this.corrupt('zip64 locator missing');
      const eocd64Offset = this.safeNumber(tail.readBigUInt64LE(locAt + 8), 'zip64 record offset');
      const rec = Buffer.from(this.read(eocd64Offset, 56, 'zip64 end record'));
      if (rec.readUInt32LE(0) !== EOCD64_SIG) throw this.corrupt('zip64 end record missing');
      count = this.safeNumber(rec.readBigUInt64LE(32), 'entry count');
      cdSize = this.safeNumber(rec.readBigUInt64LE(40), 'central directory size');
      cdOffset = this.safeNumber(rec.readBigUInt64LE(48), 'central directory offset');
    }
    const cd = Buffer.from(this.read(cdOffset, cdSize, 'central directory'));
    let p = 0;
    for (let k = 0; k < count; k++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL_SIG) throw this.corrupt('bad central directory entry');
      const flags = cd.readUInt16LE(p + 8);
      const method = cd.readUInt16LE(p + 10);
      let compressedSize = cd.readUInt32LE(p + 20);
      let size = cd.readUInt32LE(p + 24);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      let localOffset = cd.readUInt32LE(p + 42);
      if (p + 46 + nameLen + extraLen + commentLen > cd.length) throw this.corrupt('central directory entry runs past its end');
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
      // zip64 extra field (id 1): the 64-bit values appear in this order, only for fields saturated above.
      let e = p + 46 + nameLen;
      const extraEnd = e + extraLen;
      while (e + 4 <= extraEnd) {
        const id = cd.readUInt16LE(e);
        const len = cd.readUInt16LE(e + 2);
        if (id === 1) {
          let q = e + 4;
          const next = (what: string) => {
            if (q + 8 > e + 4 + len) throw this.corrupt(`zip64 field too short for ${what}`);
            const v = this.safeNumber(cd.readBigUInt64LE(q), what);
            q += 8;
            return v;
          };
          if (size === 0xffffffff) size = next('size');
          if (compressedSize === 0xffffffff) compressedSize = next('compressed size');
          if (localOffset === 0xffffffff) localOffset = next('local header offset');
        }
        e += 4 + len;
      }
      if (flags & 1) throw new LensError(`${this.file}: entry ${name} is encrypted; re-save the checkpoint without encryption.`, 'unsupported');
      if (method !== 0 && method !== 8) {
        throw new LensError(`${this.file}: entry ${name} uses zip compression method ${method}; re-save it with torch.save.`, 'unsupported');
      }
      if (method === 0 && compressedSize !== size) throw this.corrupt(`stored entry ${name} has mismatched sizes`);
      if (method === 8 && size > inflateLimit(compressedSize)) {
        throw this.corrupt(
          `entry ${name} claims to inflate from ${compressedSize} to ${size} bytes, over the limit of ${inflateLimit(compressedSize)}`,
        );
      }
      const local = Buffer.from(this.read(localOffset, 30, `local header of ${name}`));
      if (local.readUInt32LE(0) !== LOCAL_SIG) throw this.corrupt(`local header of ${name} missing`);
      const dataOffset = localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      if (dataOffset + compressedSize > this.size) {
        throw this.corrupt(`entry ${name} ends at byte ${dataOffset + compressedSize}, past the end of the file (${this.size})`);
      }
      this.entries.set(name, { name, method, compressedSize, size, dataOffset });
      p += 46 + nameLen + extraLen + commentLen;
    }
  }

  /** The last entry inflated: views of one deflated storage are read one after another, and inflating it again
   *  for each of thousands of views would multiply the work. */
  private lastInflated?: { entry: ZipEntry; bytes: Uint8Array };

  /** The entry's uncompressed bytes. */
  readEntry(entry: ZipEntry): Uint8Array {
    if (this.lastInflated?.entry === entry) return this.lastInflated.bytes;
    const raw = readRange(this.file, entry.dataOffset, entry.compressedSize);
    if (entry.method === 0) return raw;
    let out: Buffer;
    try {
      // The declared size bounds the output: inflateRawSync alone would grow its buffer without limit.
      out = zlib.inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.size) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw this.corrupt(`entry ${entry.name} inflates to more than the ${entry.size} bytes it declares`);
      }
      throw this.corrupt(`entry ${entry.name} does not inflate`);
    }
    if (out.length !== entry.size) throw this.corrupt(`entry ${entry.name} inflates to ${out.length} bytes, not ${entry.size}`);
    this.lastInflated = { entry, bytes: out };
    return out;
  }

  private read(offset: number, length: number, what: string): Uint8Array {
    if (offset < 0 || offset + length > this.size) throw this.corrupt(`${what} lies outside the file`);
    return readRange(this.file, offset, length);
  }

  private safeNumber(v: bigint, what: string): number {
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw this.corrupt(`${what} is out of range`);
    return Number(v);
  }
}
