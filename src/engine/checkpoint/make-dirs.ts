// Creating a folder and its missing parents without fs.mkdirSync's `recursive`, which misbehaves on file systems
// that refuse new folders: under /proc it retries forever (mkdir answers ENOENT, the parent exists, it tries
// again), and on a read-only file system it reports ENOENT instead of EROFS. One mkdir per missing folder here, so
// the error that comes back is the file system's own.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Creates `dir` and any missing parents. Throws the errno error of the first mkdir that fails (not EEXIST). */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); ;) {
    try {
      fs.statSync(d);
      break; // exists: mkdir below reports ENOTDIR if it is not a folder
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    missing.push(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
