import * as os from 'node:os';

/** Intra-op threads for onnxruntime when nobody says: every core. Written once: the encoder, the extra graphs'
 *  processes, the CLI's benchmark and the bench tools all start from it. */
export function defaultThreads(): number {
  return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

/** The most intra-op threads accepted: 4 per core (beyond that threads only contend for the cores), 256 at most.
 *  Every thread reserves a stack, so an unbounded count (`--threads 100000`) runs the process out of memory. */
export function maxThreads(): number {
  return Math.min(256, 4 * defaultThreads());
}
