import { type ChildProcess, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LensError } from '../errors';
import type { FeedTensor, FetchSpec, FromWorker, OutTensor, SpilledTensor, ToWorker } from './messages';

export interface RunOutput {
  outputs: Record<string, OutTensor>;
  /** Time of the onnxruntime run alone, measured in the runtime process. */
  ms: number;
}

/** Where the worker script lives: beside the bundle (dist/runtime-worker.js) or beside this file (tsc output). */
function workerScript(): string {
  const bundled = path.join(__dirname, 'runtime-worker.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, 'worker.js');
}

type Pending = Map<number, { resolve: (r: RunOutput) => void; reject: (e: Error) => void; spill: string }>;

/** A RAM-backed folder where there is one (Linux), so spilled outputs never touch a disk. */
const SPILL_DIR = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
let spillCounter = 0;

function readSpill(file: string, tensors: SpilledTensor[]): Record<string, OutTensor> {
  const outputs: Record<string, OutTensor> = {};
  const fd = fs.openSync(file, 'r');
  try {
    for (const t of tensors) {
      const data = new Float32Array(t.length / 4);
      const bytes = new Uint8Array(data.buffer);
      for (let done = 0; done < t.length; ) {
        const got = fs.readSync(fd, bytes, done, t.length - done, t.offset + done);
        if (got === 0) throw new LensError(`the runtime's output file ${file} is truncated`, 'runtime');
        done += got;
      }
      outputs[t.name] = { data, dims: t.dims };
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return outputs;
}

/**
 * An onnxruntime session in a child process. A child, not a worker thread: a native crash in onnxruntime
 * stays in the child, and cancelling is a kill — a worker thread terminated mid-run aborted the whole process
 * when the native run returned into the dead thread. The next run after a kill starts a fresh child from the
 * cached graph. Outputs come back through a spill file (see messages.ts).
 */
export class RuntimeSession {
  private child?: ChildProcess;
  private loading?: Promise<void>;
  private pending: Pending = new Map();
  private nextId = 1;
  provider = 'none';
  providerErrors: { provider: string; error: string }[] = [];
  loadMs = 0;

  constructor(
    private readonly modelPath: string,
    private readonly providers: string[],
    private readonly threads: number,
  ) {}

  /** Starts the runtime process and creates the session (first provider that works). */
  start(): Promise<void> {
    this.loading ??= new Promise<void>((resolve, reject) => {
      const child = fork(workerScript(), [], {
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        // Inside Electron (VS Code desktop) execPath is the app itself: run it as plain Node.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
        execArgv: [],
      });
      this.child = child;
      // Each child has its own pending runs, so a killed child's exit cannot fail its successor's runs.
      const pending: Pending = (this.pending = new Map());
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      const fail = (e: Error) => {
        for (const p of pending.values()) {
          fs.rmSync(p.spill, { force: true });
          p.reject(e);
        }
        pending.clear();
        reject(e);
      };
      child.on('message', (m: FromWorker) => {
        if (m.type === 'loaded') {
          this.provider = m.provider;
          this.providerErrors = m.tried;
          this.loadMs = m.ms;
          resolve();
        } else if (m.type === 'result') {
          const p = pending.get(m.id);
          pending.delete(m.id);
          if (!p) return fs.rmSync(m.spill, { force: true });
          try {
            p.resolve({ outputs: readSpill(m.spill, m.tensors), ms: m.ms });
          } catch (e) {
            p.reject(e as Error);
          }
        } else if (m.id !== undefined) {
          pending.get(m.id)?.reject(new LensError(`onnxruntime failed: ${m.message}`, 'runtime'));
          pending.delete(m.id);
        } else {
          fail(new LensError(`cannot load the model graph ${this.modelPath}: ${m.message}`, 'runtime'));
        }
      });
      child.on('error', (e) => fail(new LensError(`cannot start the runtime process: ${e.message}`, 'runtime')));
      child.on('exit', (code, signal) => {
        if (this.child === child) this.reset();
        const last = stderr.trim().split('\n').pop();
        fail(new LensError(`the runtime process stopped (${signal ?? `exit code ${code}`})${last ? `: ${last}` : ''}`, 'runtime'));
      });
      child.send({ type: 'load', modelPath: this.modelPath, providers: this.providers, threads: this.threads } satisfies ToWorker);
    });
    return this.loading;
  }

  async run(feeds: Record<string, FeedTensor>, fetches: FetchSpec[], signal?: AbortSignal): Promise<RunOutput> {
    if (signal?.aborted) throw new LensError('cancelled', 'cancelled');
    await this.start();
    const child = this.child!;
    const pending = this.pending;
    const id = this.nextId++;
    const spill = path.join(SPILL_DIR, `deberta-lens-${process.pid}-${++spillCounter}.bin`);
    return new Promise<RunOutput>((resolve, reject) => {
      const onAbort = () => {
        pending.delete(id);
        fs.rmSync(spill, { force: true });
        reject(new LensError('cancelled', 'cancelled'));
        this.terminate();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (r) => (signal?.removeEventListener('abort', onAbort), resolve(r)),
        reject: (e) => (signal?.removeEventListener('abort', onAbort), reject(e)),
        spill,
      });
      child.send({ type: 'run', id, feeds, fetches, spill } satisfies ToWorker);
    });
  }

  /** Stops the runtime process (a running session included); a later run starts a new one. */
  terminate(): Promise<void> {
    const child = this.child;
    this.reset();
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  private reset(): void {
    this.child = undefined;
    this.loading = undefined;
  }
}
