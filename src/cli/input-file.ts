// --file's text, read with a bound: a path to /dev/zero or /dev/urandom never ends, and reading it whole ran until
// the memory was gone. Pipes are still read (--file /dev/stdin, a FIFO with a writer), up to the same bound, so a
// named pipe waits for its writer as `cat` does.
import * as fs from 'node:fs';
import { LensError } from '../engine/errors';
import { formatBytes } from '../shared/format';

/** Far beyond any text a model takes in one input (the length check refuses long before), small enough to hold. */
export const MAX_INPUT_FILE_BYTES = 16 * 2 ** 20;

const cannot = (file: string, e: unknown) =>
  new LensError(`cannot read --file ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'not-found');

const tooBig = (file: string, regular: boolean, max: number) =>
  new LensError(
    `--file ${file} holds more than ${formatBytes(max)}${regular ? '' : ' (a device such as /dev/zero never ends)'}: give a text file of at most that size`,
    'too-long',
  );

export function readInputFile(file: string, max = MAX_INPUT_FILE_BYTES): string {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw cannot(file, e);
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile() && st.size > max) throw tooBig(file, true, max);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(1 << 20, max + 1 - total));
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        throw cannot(file, e);
      }
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > max) throw tooBig(file, st.isFile(), max);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
