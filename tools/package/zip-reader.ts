// Reads a VSIX (a plain zip, as vsce writes it with yazl) without external tools: the entry list, to check what
// was packaged, and entry contents, to unpack one for a smoke run. No zip64 (a VSIX is far below 4 GiB).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { LensError } from '../../src/engine/errors';

export interface ZipEntry {
  name: string;
  method: number; // 0 stored, 8 deflated
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export function listZip(buf: Buffer, file = 'zip'): ZipEntry[] {
  // End-of-central-directory record: 22 bytes plus an optional comment of up to 64 KiB.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new LensError(`${file} is not a zip file (no end-of-central-directory record): rebuild it`, 'corrupt');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let k = 0; k < count; k++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new LensError(`${file}: broken central directory at entry ${k}: rebuild it`, 'corrupt');
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    entries.push({
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
      method: buf.readUInt16LE(p + 10),
      compressedSize: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      localHeaderOffset: buf.readUInt32LE(p + 42),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

export function readEntry(buf: Buffer, e: ZipEntry): Buffer {
  const h = e.localHeaderOffset;
  const start = h + 30 + buf.readUInt16LE(h + 26) + buf.readUInt16LE(h + 28);
  const raw = buf.subarray(start, start + e.compressedSize);
  if (e.method === 0) return Buffer.from(raw);
  if (e.method === 8) return zlib.inflateRawSync(raw);
  throw new LensError(`zip entry ${e.name} uses compression method ${e.method}, which only stored/deflate readers skip: repackage`, 'unsupported');
}

/** Unpacks every entry under `dest` (refusing names that would escape it). */
export function extractZip(file: string, dest: string): void {
  const buf = fs.readFileSync(file);
  for (const e of listZip(buf, file)) {
    if (e.name.endsWith('/')) continue;
    const target = path.resolve(dest, e.name);
    if (!target.startsWith(path.resolve(dest) + path.sep)) throw new LensError(`${file}: entry '${e.name}' points outside the folder: refusing to unpack`, 'unsafe');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, readEntry(buf, e));
  }
}
