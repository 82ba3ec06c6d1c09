import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LensError } from '../errors';
import type { SpilledTensor } from './messages';

/** A RAM-backed folder where there is one (Linux), so spilled outputs never touch a disk. */
export const SPILL_DIR = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const PREFIX = 'deberta-lens-';
let counter = 0;
let leases = 0;
/** Files that belong to a result, with the lease of that result (a reused file gets a new lease). */
const live = new Map<string, number>();
/**
 * Files of released results, kept for the next run to overwrite. A freed page costs ~3× more to fault in again
 * than a kept one on these VMs (600 MB of outputs: ~1.5 s into a new file, ~0.15 s into a kept one), so one
 * spare is kept for a short while and deleted when idle.
 */
const spares: string[] = [];
const MAX_SPARES = 1;
const SPARE_IDLE_MS = 30_000;
let spareTimer: NodeJS.Timeout | undefined;

/** A file for the runtime to write the next run's outputs to: a spare if there is one, else a new name. */
export function takeSpillPath(): string {
  if (counter === 0) removeStaleSpills();
  return spares.pop() ?? path.join(SPILL_DIR, `${PREFIX}${process.pid}-${++counter}.bin`);
}

/**
 * The outputs of one run, read from the runtime's spill file on demand, so a result pays only for the tensors
 * it is asked for: a view that shows one head of one layer reads one [H, n, n] block. The file is handed back
 * when every tensor has been read, when the owner is garbage-collected, or deleted when the process exits.
 */
export class SpillReader {
  private readonly index: Map<string, SpilledTensor>;
  private unread: Set<string>;
  readonly lease = ++leases;

  constructor(
    readonly file: string,
    tensors: SpilledTensor[],
  ) {
    this.index = new Map(tensors.map((t) => [t.name, t]));
    this.unread = new Set(this.index.keys());
    live.set(file, this.lease);
  }

  has(name: string): boolean {
    return this.index.has(name);
  }

  /** Reads one output (a new array each call: callers keep what they read). */
  read(name: string): Float32Array {
    const t = this.index.get(name);
    if (!t) throw new RangeError(`no output ${name} in this run`);
    if (live.get(this.file) !== this.lease) throw new LensError('this result was released; explain again', 'runtime');
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
    returnSpill({ file: this.file, lease: this.lease });
  }
}

/** Hands a result's file back (kept as a spare, or deleted); a no-op when that lease has ended already. */
export function returnSpill({ file, lease }: { file: string; lease: number }): void {
  if (live.get(file) !== lease) return;
  live.delete(file);
  if (spares.length >= MAX_SPARES) return discardSpill(file);
  spares.push(file);
  clearTimeout(spareTimer);
  spareTimer = setTimeout(dropSpares, SPARE_IDLE_MS);
  spareTimer.unref();
}

/** Deletes a file no result owns (a cancelled or failed run's). */
export function discardSpill(file: string): void {
  live.delete(file);
  fs.rmSync(file, { force: true });
}

function dropSpares(): void {
  for (const f of spares.splice(0)) fs.rmSync(f, { force: true });
}

/** Hands back the spill file of a result nobody holds any more. */
export const spillRegistry = new FinalizationRegistry<{ file: string; lease: number }>(returnSpill);

process.on('exit', () => {
  for (const f of [...live.keys(), ...spares]) fs.rmSync(f, { force: true });
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
