import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LensError } from '../errors';
import type { SpilledTensor } from './messages';

/** A RAM-backed folder where there is one (Linux), so spilled outputs never touch a disk. */
export const SPILL_DIR = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const PREFIX = 'deberta-lens-';
let counter = 0;
const live = new Set<string>();

export function newSpillPath(): string {
  if (counter === 0) removeStaleSpills();
  return path.join(SPILL_DIR, `${PREFIX}${process.pid}-${++counter}.bin`);
}

/**
 * The outputs of one run, read from the runtime's spill file on demand. Fresh memory is slow to fault in
 * (600 MB took 2 s here), so a result pays only for the tensors it is asked for: a view that shows one head of
 * one layer reads one [H, n, n] block. The file goes away when every tensor has been read, when the owner is
 * garbage-collected, or when the process exits.
 */
export class SpillReader {
  private readonly index: Map<string, SpilledTensor>;
  private unread: Set<string>;

  constructor(
    readonly file: string,
    tensors: SpilledTensor[],
  ) {
    this.index = new Map(tensors.map((t) => [t.name, t]));
    this.unread = new Set(this.index.keys());
    live.add(file);
  }

  has(name: string): boolean {
    return this.index.has(name);
  }

  /** Reads one output (a new array each call: callers keep what they read). */
  read(name: string): Float32Array {
    const t = this.index.get(name);
    if (!t) throw new RangeError(`no output ${name} in this run`);
    if (!live.has(this.file)) throw new LensError('this result was released; explain again', 'runtime');
    const data = new Float32Array(t.length / 4);
    const bytes = new Uint8Array(data.buffer);
    const fd = fs.openSync(this.file, 'r');
    try {
      for (let done = 0; done < t.length; ) {
        const got = fs.readSync(fd, bytes, done, t.length - done, t.offset + done);
        if (got === 0) throw new LensError(`the runtime's output file ${this.file} is truncated`, 'runtime');
        done += got;
      }
    } finally {
      fs.closeSync(fd);
    }
    this.unread.delete(name);
    if (this.unread.size === 0) this.release();
    return data;
  }

  release(): void {
    releaseSpill(this.file);
  }
}

export function releaseSpill(file: string): void {
  live.delete(file);
  fs.rmSync(file, { force: true });
}

/** Deletes the spill file of a result nobody holds any more. */
export const spillRegistry = new FinalizationRegistry<string>(releaseSpill);

process.on('exit', () => {
  for (const f of live) fs.rmSync(f, { force: true });
});

/** Spill files of processes that died without cleaning up (a crash, a kill -9). */
function removeStaleSpills(): void {
  try {
    for (const f of fs.readdirSync(SPILL_DIR)) {
      const m = /^deberta-lens-(\d+)-\d+\.bin$/.exec(f);
      if (!m || Number(m[1]) === process.pid) continue;
      try {
        process.kill(Number(m[1]), 0);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ESRCH') fs.rmSync(path.join(SPILL_DIR, f), { force: true });
      }
    }
  } catch {
    /* best effort */
  }
}
