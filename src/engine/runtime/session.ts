import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { LensError } from '../errors';
import type { FeedTensor, FromWorker, OutTensor, ToWorker } from './messages';

export interface RunOutput {
  outputs: Record<string, OutTensor>;
  ms: number;
}

/** Where the worker script lives: beside the bundle (dist/runtime-worker.js) or beside this file (tsc output). */
function workerScript(): string {
  const bundled = path.join(__dirname, 'runtime-worker.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, 'worker.js');
}

/**
 * An onnxruntime session in a worker thread. `run` is cancellable: an abort terminates the worker (a native
 * run cannot be interrupted), and the next run starts a fresh one from the cached graph.
 */
export class RuntimeSession {
  private worker?: Worker;
  private loading?: Promise<void>;
  private nextId = 1;
  private pending = new Map<number, { resolve: (r: RunOutput) => void; reject: (e: Error) => void }>();
  provider = 'none';
  providerErrors: { provider: string; error: string }[] = [];
  loadMs = 0;

  constructor(
    private readonly modelPath: string,
    private readonly providers: string[],
    private readonly threads: number,
  ) {}

  /** Starts the worker and creates the session (first provider that works). */
  start(): Promise<void> {
    this.loading ??= new Promise<void>((resolve, reject) => {
      // onnxruntime's session creation needs more native stack than a worker's default 4 MB: it segfaulted there.
      const worker = new Worker(workerScript(), { resourceLimits: { stackSizeMb: 32 } });
      this.worker = worker;
      // Each worker has its own pending runs, so a terminated worker's exit cannot fail its successor's runs.
      const pending = (this.pending = new Map());
      const fail = (e: Error) => {
        for (const p of pending.values()) p.reject(e);
        pending.clear();
        reject(e);
      };
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'loaded') {
          this.provider = m.provider;
          this.providerErrors = m.tried;
          this.loadMs = m.ms;
          resolve();
        } else if (m.type === 'result') {
          pending.get(m.id)?.resolve({ outputs: m.outputs, ms: m.ms });
          pending.delete(m.id);
        } else if (m.id !== undefined) {
          pending.get(m.id)?.reject(new LensError(`onnxruntime failed: ${m.message}`, 'runtime'));
          pending.delete(m.id);
        } else {
          fail(new LensError(`cannot load the model graph ${this.modelPath}: ${m.message}`, 'runtime'));
        }
      });
      worker.on('error', (e) => fail(new LensError(`the runtime worker failed: ${e.message}`, 'runtime')));
      worker.on('exit', (code) => {
        if (this.worker === worker) this.reset();
        fail(new LensError(`the runtime worker exited (code ${code})`, 'runtime'));
      });
      worker.postMessage({ type: 'load', modelPath: this.modelPath, providers: this.providers, threads: this.threads } satisfies ToWorker);
    });
    return this.loading;
  }

  async run(feeds: Record<string, FeedTensor>, fetches: string[], signal?: AbortSignal): Promise<RunOutput> {
    if (signal?.aborted) throw new LensError('cancelled', 'cancelled');
    await this.start();
    const worker = this.worker!;
    const pending = this.pending;
    const id = this.nextId++;
    return new Promise<RunOutput>((resolve, reject) => {
      const onAbort = () => {
        pending.delete(id);
        reject(new LensError('cancelled', 'cancelled'));
        void this.terminate();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (r) => (signal?.removeEventListener('abort', onAbort), resolve(r)),
        reject: (e) => (signal?.removeEventListener('abort', onAbort), reject(e)),
      });
      worker.postMessage({ type: 'run', id, feeds, fetches } satisfies ToWorker);
    });
  }

  async terminate(): Promise<void> {
    const w = this.worker;
    this.reset();
    if (w) await w.terminate();
  }

  private reset(): void {
    this.worker = undefined;
    this.loading = undefined;
  }
}
