// Reads a VSIX (a plain zip, as vsce writes it with yazl) through the engine's one zip reader: the entry list, to
// check what was packaged, and entry contents, to unpack one for a smoke run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../../src/engine/errors';
import { bytesSource, readZipEntries, readZipEntry, type ZipEntry } from '../../src/engine/zip/zip-reader';

export type { ZipEntry } from '../../src/engine/zip/zip-reader';

const refusals = (file: string) => ({
  corrupt: (what: string) => new LensError(`${file} is not a readable zip file (${what}): rebuild it`, 'corrupt'),
  check: (e: Pick<ZipEntry, 'name' | 'method'>) => {
    if (e.method !== 0 && e.method !== 8) {
      throw new LensError(
        `zip entry ${e.name} uses compression method ${e.method}, which only stored/deflate readers skip: repackage`,
        'unsupported',
      );
    }
  },
});

export function listZip(buf: Buffer, file = 'zip'): ZipEntry[] {
  return readZipEntries(bytesSource(buf), refusals(file));
}

export function readEntry(buf: Buffer, e: ZipEntry, file = 'zip'): Buffer {
  return Buffer.from(readZipEntry(bytesSource(buf), e, refusals(file).corrupt));
}

/** Unpacks every entry under `dest` (refusing names that would escape it). */
export function extractZip(file: string, dest: string): void {
  const buf = fs.readFileSync(file);
  for (const e of listZip(buf, file)) {
    if (e.name.endsWith('/')) continue;
    const target = path.resolve(dest, e.name);
    if (!target.startsWith(path.resolve(dest) + path.sep))
      throw new LensError(`${file}: entry '${e.name}' points outside the folder: refusing to unpack`, 'unsafe');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, readEntry(buf, e, file));
  }
}
