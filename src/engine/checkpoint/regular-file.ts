// Reading a model folder's small files (config.json, shard indexes, tokenizer files) without trusting what the
// name points at: a symlink to /dev/zero reads forever, a FIFO blocks the open, a directory fails later with a
// bare EISDIR. The file is opened non-blocking and checked on its descriptor (fstat), so what is checked is what
// is read, and its size is bounded before anything is allocated.
import * as fs from 'node:fs';
import { LensError } from '../errors';

/** What a non-regular file is, in words, for the one-line refusal. */
export function fileKind(st: fs.Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

export function notRegular(file: string, what: string, st: fs.Stats): LensError {
  return new LensError(
    `${file}: ${what} is ${fileKind(st)}, not a regular file; replace it with the model's original file.`,
    'invalid-input',
  );
}

/** Throws a LensError unless `file` (after symlinks) is a regular file; returns its size. Errors from stat itself
 *  (ENOENT, EACCES) are rethrown as they are, for the caller to word. */
export function regularFileSize(file: string, what: string): number {
  const st = fs.statSync(file);
  if (!st.isFile()) throw notRegular(file, what, st);
  return st.size;
}

/**
 * The bytes of `file`, refusing anything but a regular file of at most `maxBytes` bytes. Errors of the open itself
 * (ENOENT, EACCES) are rethrown unchanged so that each caller keeps its own wording for a missing file.
 */
export function readRegularFile(file: string, what: string, maxBytes: number): Buffer {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw notRegular(file, what, st);
    if (st.size > maxBytes) {
      throw new LensError(
        `${file}: ${what} is ${st.size} bytes, over the limit of ${maxBytes} for such a file; replace it with the model's original file.`,
        'corrupt',
      );
    }
    const out = Buffer.alloc(st.size);
    let done = 0;
    // A file that shrinks while read ends early; one that grows is read to the size checked, no further.
    while (done < out.length) {
      const n = fs.readSync(fd, out, done, out.length - done, done);
      if (n === 0) break;
      done += n;
    }
    return out.subarray(0, done);
  } finally {
    fs.closeSync(fd);
  }
}

/** Size limits for the files read whole. config.json is ~1 KB and a shard index tens of KB; tokenizer_config.json
 *  may carry a chat template. tokenizer.json of a 250k-piece vocabulary is ~20–40 MB, so it gets a far larger cap. */
export const MAX_SMALL_JSON_BYTES = 16 * 2 ** 20;
export const MAX_TOKENIZER_JSON_BYTES = 512 * 2 ** 20;
/** spm.model, vocab.json, merges.txt: the largest released are a few MB. */
export const MAX_TOKENIZER_FILE_BYTES = 256 * 2 ** 20;
