// PyTorch checkpoints as zips (torch.save): the entries of the archive, read through the one zip reader
// (../zip/zip-reader.ts) with this format's refusals. torch.save writes stored (uncompressed) entries, 64-byte
// aligned; deflated entries are accepted too but can only be read whole.
import { LensError } from '../errors';
import { fileSource, inflateLimit, readZipEntries, readZipEntry, type ZipEntry, type ZipSource } from '../zip/zip-reader';
import { readRange } from './tensor';

export type { ZipEntry } from '../zip/zip-reader';

export class ZipArchive {
  readonly entries = new Map<string, ZipEntry>();
  private readonly source: ZipSource;

  constructor(
    readonly file: string,
    readonly size: number,
  ) {
    this.source = fileSource(size, (offset, length) => readRange(file, offset, length));
    const check = ({ name, flags, method, compressedSize, size }: Omit<ZipEntry, 'dataOffset'>) => {
      if (flags & 1)
        throw new LensError(`${this.file}: entry ${name} is encrypted; re-save the checkpoint without encryption.`, 'unsupported');
      if (method !== 0 && method !== 8) {
        throw new LensError(
          `${this.file}: entry ${name} uses zip compression method ${method}; re-save it with torch.save.`,
          'unsupported',
        );
      }
      if (method === 0 && compressedSize !== size) throw this.corrupt(`stored entry ${name} has mismatched sizes`);
      // Refused here, before anything inflates: a zip bomb's claim is visible in its directory.
      if (method === 8 && size > inflateLimit(compressedSize)) {
        throw this.corrupt(
          `entry ${name} claims to inflate from ${compressedSize} to ${size} bytes, over the limit of ${inflateLimit(compressedSize)}`,
        );
      }
    };
    for (const e of readZipEntries(this.source, { corrupt: (what) => this.corrupt(what), check })) this.entries.set(e.name, e);
  }

  private corrupt(what: string): LensError {
    return new LensError(`${this.file}: not a valid PyTorch zip checkpoint (${what}); re-download or re-save it.`, 'corrupt');
  }

  /** The last entry inflated: views of one deflated storage are read one after another, and inflating it again
   *  for each of thousands of views would multiply the work. */
  private lastInflated?: { entry: ZipEntry; bytes: Uint8Array };

  /** The entry's uncompressed bytes. */
  readEntry(entry: ZipEntry): Uint8Array {
    if (this.lastInflated?.entry === entry) return this.lastInflated.bytes;
    const bytes = readZipEntry(this.source, entry, (what) => this.corrupt(what));
    if (entry.method !== 0) this.lastInflated = { entry, bytes };
    return bytes;
  }
}
