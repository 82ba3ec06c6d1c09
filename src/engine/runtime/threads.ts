import * as os from 'node:os';

/** Intra-op threads for onnxruntime when nobody says: every core. Written once: the encoder, the extra graphs'
 *  processes, the CLI's benchmark and the bench tools all start from it. */
export function defaultThreads(): number {
  return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}
