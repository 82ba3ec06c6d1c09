// A folder's tokenizer loaded and run in a worker thread under a time and memory budget. A tokenizer file can
// make encoding slow without bound (a backtracking Replace pattern, an enormous BPE word); JavaScript cannot
// interrupt a running regular expression, but terminating its thread can. On a budget overrun or a cancel the
// thread is terminated, the error names the file and the construct that was running, and the next request
// starts a fresh thread.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { LensError } from '../errors';
import type { ModelInput } from '../tokenizer/types';
import type { SpecialIds, TokenizerHandle } from '../tokenizer/types';
import type { Token, TokenizerKind } from '../types';
import type { FromThread, ThreadData, ThreadFailure, ToThread } from './protocol';

export interface ThreadBudget {
  /** Milliseconds an encode of `chars` UTF-16 units may take. */
  encodeMs: (chars: number) => number;
  /** Milliseconds loading the tokenizer files may take. */
  loadMs: number;
  /** JavaScript heap of the thread, in MB. */
  heapMb: number;
}

/** Loading the real 128k-piece tokenizers takes ~0.1–0.5 s and encoding ~5 µs per character: the budget is
 *  generous for real files and still ends a runaway within seconds. */
export const DEFAULT_BUDGET: ThreadBudget = { encodeMs: (chars) => 3000 + 0.05 * chars, loadMs: 60_000, heapMb: 1024 };

const FILES: Record<TokenizerKind, string> = {
  spm: 'spm.model',
  'tokenizer.json': 'tokenizer.json',
  bpe: 'vocab.json + merges.txt',
  wordpiece: 'vocab.txt',
};

/** Beside the bundle (dist/tokenizer-thread.js) or beside this file (tsc output). */
function threadScript(): string {
  const bundled = path.join(__dirname, 'tokenizer-thread.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, 'thread.js');
}

type Opened = Extract<FromThread, { type: 'opened' }>;

interface Running {
  worker: Worker;
  stage: Int32Array;
  opened: Promise<Opened>;
  /** Rejects whatever the thread is doing (exit, crash, out of memory). */
  fail?: (e: Error) => void;
}

export class ThreadedTokenizer implements TokenizerHandle {
  private running?: Running;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;

  private constructor(
    private readonly dir: string,
    private readonly budget: ThreadBudget,
    private readonly info: Opened,
  ) {}

  get kind(): TokenizerKind {
    return this.info.kind;
  }
  get special(): SpecialIds {
    return this.info.special;
  }
  get vocabSize(): number {
    return this.info.vocabSize;
  }

  /** Loads the folder's tokenizer in a thread; rejects with the loader's LensError (e.g. 'not-found'). */
  static async open(dir: string, budget: ThreadBudget = DEFAULT_BUDGET): Promise<ThreadedTokenizer> {
    const running = start(dir, budget);
    const info = await running.opened;
    const tok = new ThreadedTokenizer(dir, budget, info);
    tok.running = running;
    return tok;
  }

  encode(text: string, signal?: AbortSignal): Promise<Token[]> {
    const what = `tokenizing ${text.length} characters`;
    return this.request((id) => ({ type: 'encode', id, text }), this.budget.encodeMs(text.length), what, signal).then(
      (m) => (m as Extract<FromThread, { type: 'encoded' }>).tokens,
    );
  }

  modelInput(text: string, pair?: string, signal?: AbortSignal): Promise<ModelInput> {
    const chars = text.length + (pair?.length ?? 0);
    return this.request(
      (id) => ({ type: 'input', id, text, pair }),
      this.budget.encodeMs(chars),
      `tokenizing ${chars} characters`,
      signal,
    ).then((m) => (m as Extract<FromThread, { type: 'input' }>).input);
  }

  pieces(ids: number[], signal?: AbortSignal): Promise<(string | undefined)[]> {
    return this.request((id) => ({ type: 'pieces', id, ids }), this.budget.encodeMs(0), 'looking up pieces', signal).then(
      (m) => (m as Extract<FromThread, { type: 'pieces' }>).pieces,
    );
  }

  async dispose(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    if (r) await r.worker.terminate();
  }

  /** One request at a time, so a budget measures that request's work alone. */
  private request(make: (id: number) => ToThread, ms: number, what: string, signal?: AbortSignal): Promise<FromThread> {
    const run = this.queue.then(() => this.requestNow(make(this.nextId++), ms, what, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async requestNow(msg: ToThread, ms: number, what: string, signal?: AbortSignal): Promise<FromThread> {
    if (signal?.aborted) throw new LensError('cancelled', 'cancelled');
    this.running ??= start(this.dir, this.budget);
    const r = this.running;
    await r.opened;
    return new Promise<FromThread>((resolve, reject) => {
      const stop = (e: Error) => {
        cleanup();
        if (this.running === r) this.running = undefined;
        void r.worker.terminate();
        reject(e);
      };
      const onAbort = () => stop(new LensError('cancelled', 'cancelled'));
      const timer = setTimeout(() => {
        const stage = this.info.stages[Atomics.load(r.stage, 0)] ?? 'the tokenizer';
        stop(
          new LensError(
            `${path.join(this.dir, FILES[this.info.kind])}: ${what} ran past its ${Math.round(ms)} ms budget in ${stage}; ` +
              `that construct does unbounded work on this text — use the tokenizer files that came with the model.`,
            'unsupported',
          ),
        );
      }, ms);
      const onMessage = (m: FromThread) => {
        if (!('id' in m) || m.id !== msg.id) return;
        cleanup();
        if (m.type === 'failed') reject(rebuild(m.error));
        else resolve(m);
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        r.worker.off('message', onMessage);
        r.fail = undefined;
      };
      r.fail = (e) => {
        cleanup();
        reject(e);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      r.worker.on('message', onMessage);
      r.worker.postMessage(msg);
    });
  }
}

function rebuild(f: ThreadFailure): Error {
  return f.lens ? new LensError(f.message, f.code) : new Error(f.message);
}

function start(dir: string, budget: ThreadBudget): Running {
  const stage = new Int32Array(new SharedArrayBuffer(4));
  const workerData: ThreadData = { dir, stage };
  const worker = new Worker(threadScript(), {
    workerData,
    resourceLimits: { maxOldGenerationSizeMb: budget.heapMb },
    // Inside Electron the extension host's own flags must not leak into the thread.
    execArgv: [],
  });
  // A thread left running must not keep a CLI process (or a test runner) alive.
  worker.unref();
  const running: Running = { worker, stage, opened: undefined! };
  const fail = (e: Error) => running.fail?.(e);
  running.opened = new Promise<Opened>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(
        new LensError(`${dir}: loading the tokenizer took longer than ${budget.loadMs} ms; check the tokenizer files.`, 'unsupported'),
      );
    }, budget.loadMs);
    const onFirst = (m: FromThread) => {
      if (m.type !== 'opened' && !(m.type === 'failed' && m.id === undefined)) return;
      clearTimeout(timer);
      worker.off('message', onFirst);
      if (m.type === 'opened') resolve(m);
      else {
        void worker.terminate();
        reject(rebuild(m.error));
      }
    };
    worker.on('message', onFirst);
    const died = (e: Error) => {
      clearTimeout(timer);
      reject(e);
      fail(e);
    };
    worker.on('error', (e: Error & { code?: string }) => {
      died(
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new LensError(`${dir}: the tokenizer needed more than ${budget.heapMb} MB of memory; check the tokenizer files.`, 'unsupported')
          : new LensError(`${dir}: the tokenizer thread failed (${e.message}).`, 'runtime'),
      );
    });
    worker.on('exit', (code) => died(new LensError(`${dir}: the tokenizer thread exited (code ${code}).`, 'runtime')));
  });
  running.opened.catch(() => undefined);
  return running;
}
