// Where the CLI's output goes, and what it says when that fails: --out is checked before the model runs (a
// missing or read-only folder found after minutes of computing wastes them), a write error is one line naming the
// file, and a closed stdout (`deberta-lens … | head`) ends the command quietly, as Unix tools do.
import * as fs from 'node:fs';
import { LensError } from '../engine';

const code = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;

/** True for the error a write to a closed pipe gives (Node ignores SIGPIPE, so it surfaces as EPIPE). */
export function isClosedPipe(e: unknown): boolean {
  return code(e) === 'EPIPE';
}

/** Fails now, with one line, if `out` cannot be opened for writing. An existing file is left as it is (opened, not
 *  truncated) until the result is ready; a file this check created is removed again. */
export function checkOutWritable(out: string, flag = '--out'): void {
  const existed = fs.existsSync(out);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO with no reader would otherwise block this check.
    fd = fs.openSync(out, fs.constants.O_WRONLY | fs.constants.O_CREAT | (fs.constants.O_NONBLOCK ?? 0), 0o666);
  } catch (e) {
    throw writeError(e, flag, out);
  }
  fs.closeSync(fd);
  if (!existed) fs.rmSync(out, { force: true });
}

/** The one line for a failed write of `out` (or of standard output when `out` is undefined). */
export function writeError(e: unknown, flag: string, out: string | undefined): LensError {
  const c = code(e) ?? 'error';
  const what = out === undefined ? 'cannot write to standard output' : `cannot write ${flag} ${out}`;
  const fix =
    c === 'ENOSPC' || c === 'EDQUOT'
      ? 'the disk is full: free space or write elsewhere'
      : c === 'ENOENT'
        ? 'its folder does not exist: create it or pick another path'
        : c === 'EISDIR'
          ? 'it is a folder: give a file name'
          : 'pick a file in a folder you can write';
  return new LensError(`${what} (${c}): ${fix}`, 'invalid-input');
}
