import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { threadId } from 'node:worker_threads';
import { LensError } from '../errors';
import type { SpilledTensor } from './messages';

/** A RAM-backed folder where there is one (Linux), so spilled outputs never touch a disk. */
export const SPILL_DIR = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const PREFIX = 'deberta-lens-';
/** Each thread has its own counter (and its own exit clean-up): a worker thread's files (the atlas thread's) carry
 *  its id, or they would take the names of the main thread's and be deleted under it. */
const OWN = threadId === 0 ? `${process.pid}` : `${process.pid}-t${threadId}`;
let counter = 0;
/** Files this process created that a run is writing or the engine is reading. */
const inUse = new Set<string>();
/**
 * Files whose outputs have been read, kept for the next run to overwrite. A freed page costs ~3× more to fault in
 * again than a kept one on these VMs (a fresh 60 MB file took the runtime 0.15–0.25 s to write in VS Code), so spares
 * are kept for a short while and deleted when idle: two, for a run someone waits for while a background run's
 * outputs are being read.
 */
const spares: string[] = [];
export const MAX_SPARES = 2;
const SPARE_IDLE_MS = 30_000;
let spareTimer: NodeJS.Timeout | undefined;

/**
 * Creates (or takes a spare of) the file the runtime writes one run's outputs to. The engine creates, reads and
 * removes spill files; no result owns one: a run's outputs are read into memory as soon as the run returns.
 */
export function takeSpillPath(): string {
  if (counter === 0) removeStaleSpills();
  const spare = spares.pop();
  const file = spare ?? path.join(SPILL_DIR, `${PREFIX}${OWN}-${++counter}.bin`);
  if (!spare) fs.closeSync(fs.openSync(file, 'w', 0o600));
  inUse.add(file);
  return file;
}

/** The outputs of one run in its spill file. Read what you need, then release(). */
export class SpillReader {
  private readonly index: Map<string, SpilledTensor>;

  constructor(
    readonly file: string,
    tensors: SpilledTensor[],
  ) {
    this.index = new Map(tensors.map((t) => [t.name, t]));
  }

  dims(name: string): number[] {
    return this.tensor(name).dims;
  }

  private tensor(name: string): SpilledTensor {
    const t = this.index.get(name);
    if (!t) throw new RangeError(`no output ${name} in this run`);
    return t;
  }

  /** Reads one output into `into` at element offset `at` (a new array when `into` is absent). */
  read(name: string, into?: Float32Array, at = 0): Float32Array {
    const t = this.tensor(name);
    if (!inUse.has(this.file)) throw new LensError("this run's outputs were already released", 'runtime');
    const data = into ?? new Float32Array(t.length / 4);
    if (at * 4 + t.length > data.byteLength) throw new RangeError(`output ${name} does not fit the destination`);
    const bytes = new Uint8Array(data.buffer, data.byteOffset + at * 4, t.length);
    const fd = fs.openSync(this.file, 'r');
    try {
      for (let done = 0; done < t.length;) {
        const got = fs.readSync(fd, bytes, done, t.length - done, t.offset + done);
        if (got === 0) throw new LensError(`the runtime's output file ${this.file} is truncated`, 'runtime');
        done += got;
      }
    } finally {
      fs.closeSync(fd);
    }
    return data;
  }

  /** Hands the file back (kept as a spare for the next run, or deleted). */
  release(): void {
    returnSpill(this.file);
  }
}

function returnSpill(file: string): void {
  if (!inUse.delete(file)) return;
  if (spares.length >= MAX_SPARES) return void fs.rmSync(file, { force: true });
  spares.push(file);
  clearTimeout(spareTimer);
  spareTimer = setTimeout(dropSpares, SPARE_IDLE_MS);
  spareTimer.unref();
}

/** Deletes a file whose run failed or was cancelled. */
export function discardSpill(file: string): void {
  inUse.delete(file);
  fs.rmSync(file, { force: true });
}

function dropSpares(): void {
  for (const f of spares.splice(0)) fs.rmSync(f, { force: true });
}

/** Spill files this process holds right now (tests check that nothing piles up). */
export function spillFilesHeld(): number {
  return inUse.size + spares.length;
}

process.on('exit', () => {
  for (const f of [...inUse, ...spares]) fs.rmSync(f, { force: true });
});

/** Spill files of processes that died without cleaning up (a crash, a kill -9). */
function removeStaleSpills(): void {
  try {
    for (const f of fs.readdirSync(SPILL_DIR)) {
      const m = /^deberta-lens-(\d+)-(?:t\d+-)?\d+\.bin$/.exec(f);
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
