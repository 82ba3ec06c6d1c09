import { type ChildProcess, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LensError } from '../errors';
import type { ChainedRun, DerivedTensors, FeedTensor, FromWorker, GraphName, KeptOutput, KeptSlice, ToWorker } from './messages';
import { discardSpill, SpillReader, takeSpillPath } from './spill';

export interface RunOutput {
  outputs: SpillReader;
  /** Time of the onnxruntime run alone (outputs copied out by onnxruntime-node included), measured in the runtime process. */
  ms: number;
  /** Time the runtime process took to write the outputs to the spill file. */
  spillMs: number;
  /** Time the runtime process took to derive kept tensors it lacked before the run (0 when it held them). */
  deriveMs: number;
  /** Time of the chained run alone, when the run had one (its outputs are the ones in `outputs`). */
  thenMs?: number;
}

/** Where the worker script lives: beside the bundle (dist/runtime-worker.js) or beside this file (tsc output). */
function workerScript(): string {
  const bundled = path.join(__dirname, 'runtime-worker.js');
  return fs.existsSync(bundled) ? bundled : path.join(__dirname, 'worker.js');
}

/**
 * glibc malloc settings for the runtime process: output blocks (up to ~17 MB each for v3-large at 512 tokens)
 * come from the heap rather than fresh mmaps, and freed heap memory is kept rather than trimmed, so every run
 * after the first reuses warm pages (576 MB of outputs: ~0.1 s instead of 1–2 s of page faults on these VMs).
 * And transparent huge pages for malloc's memory (glibc ≥ 2.35; where the kernel leaves them to madvise): a run at
 * an input length the runtime has not planned yet allocates every attention tensor fresh (hundreds of MB each at
 * 2,000 tokens), and in 4 KB pages the faults took longer than the arithmetic (v3-base, 1,856 tokens: 121 s a
 * forward pass, 10.9 s with huge pages). Ignored by other C libraries and older glibc.
 */
export function runtimeMallocEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const tunables = [env.GLIBC_TUNABLES, 'glibc.malloc.hugetlb=1'].filter((t) => t).join(':');
  return { MALLOC_MMAP_THRESHOLD_: String(32 << 20), MALLOC_TRIM_THRESHOLD_: String(4 * 2 ** 30), GLIBC_TUNABLES: tunables };
}

/** Runs (and graph additions, with no spill file: '') waiting for the runtime process. */
type Pending = Map<number, { resolve: (r: RunOutput | null) => void; reject: (e: Error) => void; spill: string }>;

/** Extra inputs of a run that come from tensors the runtime keeps (a layer's weights, sent once per process). */
export interface KeptFeeds {
  /**
   * Tensors to keep by key; `tensors` is read only when this runtime process does not hold `key` yet. With `bytes`,
   * the tensors belong to one result (a layer's input state): they count against KEPT_STATES_BYTES, and the least
   * recently used go when that is full (sent again if a run needs them after all).
   */
  sources: { key: string; tensors: () => Record<string, FeedTensor>; bytes?: number }[];
  /** Tensors the runtime computes from kept ones when it lacks them (see DerivedTensors). */
  derive?: DerivedTensors[];
  /** Feed name → the kept tensor of that name (which key, which rows). */
  feeds: Record<string, KeptSlice>;
  /** Outputs of this run the runtime keeps, once it succeeds, for later runs (counted as sources with `bytes`). */
  outputs?: (KeptOutput & { bytes: number })[];
}

/**
 * Bytes of results' tensors (their layers' input states) a runtime process keeps at most: at 2,000 tokens a state
 * is 6 MB (v3-base) to 8 MB (v3-large), so this holds every layer of two or three long results.
 */
export const KEPT_STATES_BYTES = 512 * 2 ** 20;

/**
 * How long background work (a layer computed ahead, the heads after the one on screen) waits after a run someone
 * waited for: a reader stepping through layers asks for the next within moments, and on two cores a background
 * head run (and reading its 60 MB) beside theirs doubles what they wait.
 */
export const QUIET_AFTER_FOREGROUND_MS = 250;

/** A chained run (see ChainedRun) whose kept feeds are given as for a run: their sources go once per process. */
export type ChainedRunSpec = Omit<ChainedRun, 'derive' | 'kept'> & { kept?: KeptFeeds };

/**
 * onnxruntime sessions (the forward graph and the one-layer graph) in a child process. A child, not a worker thread: a native crash in onnxruntime
 * stays in the child, and cancelling is a kill — a worker thread terminated mid-run aborted the whole process
 * when the native run returned into the dead thread. The next run after a kill starts a fresh child from the
 * cached graph. Outputs come back through a spill file (see spill.ts).
 */
export class RuntimeSession {
  private child?: ChildProcess;
  private loading?: Promise<void>;
  private pending: Pending = new Map();
  private nextId = 1;
  /** Background runs waiting for their turn (backgroundTurn), first come first served. */
  private waiting: (() => void)[] = [];
  /** A background run was let go and has not been sent yet: no second one goes meanwhile. */
  private granted = false;
  /** Runs someone waits for (not background) now in flight, and those waiting for there to be none. */
  private foreground = 0;
  private foregroundWaiters: (() => void)[] = [];
  /** When the last run someone waited for came back (performance.now()). */
  private foregroundEnded = -Infinity;
  /** Set while background work waits for the quiet time to pass. */
  private quietTimer?: NodeJS.Timeout;
  /** Keys of the tensors the current child keeps. */
  private keptKeys = new Set<string>();
  /** Of those, the ones that belong to a result (see KeptFeeds.sources): their bytes, least recently used first. */
  private keptStates = new Map<string, number>();
  private closed = false;
  /** Bytes of results' tensors the runtime process may keep (tests lower it). */
  keptStatesLimit = KEPT_STATES_BYTES;
  provider = 'none';
  providerErrors: { provider: string; error: string }[] = [];
  loadMs = 0;

  private readonly graphs: Partial<Record<GraphName, string>>;

  constructor(
    graphs: Partial<Record<GraphName, string>>,
    private readonly providers: string[],
    private readonly threads: number,
  ) {
    this.graphs = { ...graphs };
  }

  /** Starts the runtime process and creates the session (first provider that works). */
  start(): Promise<void> {
    this.loading ??= new Promise<void>((resolve, reject) => {
      const child = fork(workerScript(), [], {
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        // Inside Electron (VS Code desktop) execPath is the app itself: run it as plain Node.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', ...runtimeMallocEnv() },
        execArgv: [],
      });
      this.child = child;
      this.keptKeys = new Set();
      this.keptStates = new Map();
      // Each child has its own pending runs, so a killed child's exit cannot fail its successor's runs.
      const pending: Pending = (this.pending = new Map() as Pending);
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      const fail = (e: Error) => {
        for (const p of pending.values()) {
          if (p.spill) discardSpill(p.spill);
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
        } else if (m.type === 'added') {
          pending.get(m.id)?.resolve(null);
          pending.delete(m.id);
        } else if (m.type === 'result') {
          const p = pending.get(m.id);
          pending.delete(m.id);
          if (!p) return discardSpill(m.spill);
          p.resolve({ outputs: new SpillReader(m.spill, m.tensors), ms: m.ms, spillMs: m.spillMs, deriveMs: m.deriveMs, thenMs: m.thenMs });
        } else if (m.id !== undefined) {
          pending.get(m.id)?.reject(new LensError(`onnxruntime failed: ${m.message}`, 'runtime'));
          pending.delete(m.id);
        } else {
          fail(new LensError(`cannot load the model graph ${Object.values(this.graphs)[0]}: ${m.message}`, 'runtime'));
        }
        this.pump();
      });
      child.on('error', (e) => fail(new LensError(`cannot start the runtime process: ${e.message}`, 'runtime')));
      child.on('exit', (code, signal) => {
        if (this.child === child) this.reset();
        const last = stderr.trim().split('\n').pop();
        fail(new LensError(`the runtime process stopped (${signal ?? `exit code ${code}`})${last ? `: ${last}` : ''}`, 'runtime'));
      });
      child.send({ type: 'load', graphs: this.graphs, providers: this.providers, threads: this.threads } satisfies ToWorker);
    });
    return this.loading;
  }

  /**
   * Serves one more graph in this process (runs queue behind the addition); a process started later, after a
   * cancel or a crash, loads it with the others.
   */
  async addGraph(name: GraphName, file: string): Promise<void> {
    if (this.graphs[name] === file) return;
    this.graphs[name] = file;
    // No process yet: the next start loads every graph.
    if (!this.loading) return;
    await this.loading;
    const child = this.child;
    if (!child) return;
    const pending = this.pending;
    const id = this.nextId++;
    await new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve: () => resolve(), reject, spill: '' });
      child.send({ type: 'add', id, graphs: { [name]: file } } satisfies ToWorker);
    });
  }

  /** The runtime process's id while it runs (for memory figures). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Runs one graph (and `then`, a second one on its outputs); the caller reads the outputs it needs and then
   * releases them (`outputs.release()`). A `background` run (work nobody is looking at yet: the rest of a layer
   * after the head on screen, a layer computed ahead) is one the caller got a turn for (`backgroundTurn`): such runs
   * go one at a time while nothing else is in flight, so a run someone waits for waits behind one of them at most.
   */
  async run(
    graph: GraphName,
    feeds: Record<string, FeedTensor>,
    fetches: string[],
    signal?: AbortSignal,
    kept?: KeptFeeds,
    then?: ChainedRunSpec,
    background = false,
  ): Promise<RunOutput> {
    if (signal?.aborted) throw new LensError('cancelled', 'cancelled');
    if (this.closed) throw new LensError('the model was closed (a setting changed or the panel moved on); explain again', 'runtime');
    try {
      await this.start();
    } finally {
      // Sent below (synchronously) or failed: either way the turn passes to the next background run after this one.
      if (background) {
        this.granted = false;
        queueMicrotask(() => this.pump());
      }
    }
    const child = this.child!;
    const held = this.send(child, graph, feeds, fetches, signal, kept, then);
    // The outputs it kept are held once it succeeded, by this process (a later one does not have them).
    const out = kept?.outputs?.length
      ? held.then((r) => {
          if (this.child !== child) return r;
          for (const o of kept.outputs!) {
            this.keptKeys.add(o.key);
            this.touchState(o.key, o.bytes);
          }
          this.dropOldStates(child, new Set(kept.outputs!.map((o) => o.key)));
          return r;
        })
      : held;
    if (background) return out;
    this.foreground++;
    const settled = () => {
      if (--this.foreground > 0) return;
      this.foregroundEnded = performance.now();
      this.afterQuiet();
    };
    out.then(settled, settled);
    return out;
  }

  /** Builds one run's message (the kept tensors this process lacks go with it) and sends it. */
  private send(
    child: ChildProcess,
    graph: GraphName,
    feeds: Record<string, FeedTensor>,
    fetches: string[],
    signal: AbortSignal | undefined,
    kept: KeptFeeds | undefined,
    then: ChainedRunSpec | undefined,
  ): Promise<RunOutput> {
    const pending = this.pending;
    const id = this.nextId++;
    const msg: ToWorker = { type: 'run', id, graph, feeds, fetches, spill: '' };
    if (then) {
      const { kept: thenKept, ...rest } = then;
      msg.then = thenKept ? { ...rest, derive: thenKept.derive, kept: thenKept.feeds } : rest;
    }
    const sources = [...(kept?.sources ?? []), ...(then?.kept?.sources ?? [])];
    if (sources.length) {
      msg.keep = [];
      for (const k of sources) {
        if (!this.keptKeys.has(k.key)) {
          msg.keep.push({ key: k.key, tensors: k.tensors() });
          this.keptKeys.add(k.key);
        }
        if (k.bytes !== undefined) this.touchState(k.key, k.bytes);
      }
      // Room for this run's states: the least recently used of other results' go (before this message, in order).
      this.dropOldStates(child, new Set(sources.map((k) => k.key)));
    }
    if (kept) {
      msg.derive = kept.derive;
      msg.kept = kept.feeds;
      if (kept.outputs?.length) msg.keepOutputs = kept.outputs.map(({ output, key, as }) => ({ output, key, as }));
    }
    const spill = (msg.spill = takeSpillPath());
    return new Promise<RunOutput>((resolve, reject) => {
      const onAbort = () => {
        pending.delete(id);
        discardSpill(spill);
        reject(new LensError('cancelled', 'cancelled'));
        void this.terminate();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (r) => (signal?.removeEventListener('abort', onAbort), resolve(r!)),
        reject: (e) => (signal?.removeEventListener('abort', onAbort), reject(e)),
        spill,
      });
      child.send(msg);
    });
  }

  /** A result's kept tensor was used (or is kept now): it becomes the most recently used. */
  private touchState(key: string, bytes: number): void {
    this.keptStates.delete(key);
    this.keptStates.set(key, bytes);
  }

  /** Drops the least recently used result tensors (not those in `keep`) until they fit KEPT_STATES_BYTES. */
  private dropOldStates(child: ChildProcess, keep: ReadonlySet<string>): void {
    let total = this.keptStateBytes;
    const drop: string[] = [];
    for (const [key, bytes] of this.keptStates) {
      if (total <= this.keptStatesLimit) break;
      if (keep.has(key)) continue;
      drop.push(key);
      total -= bytes;
    }
    if (drop.length) this.dropFrom(child, drop);
  }

  /** Bytes of results' tensors the runtime process keeps now. */
  get keptStateBytes(): number {
    let total = 0;
    for (const b of this.keptStates.values()) total += b;
    return total;
  }

  /** Keys of the results' tensors the runtime process keeps now, least recently used first. */
  keptStateKeys(): string[] {
    return [...this.keptStates.keys()];
  }

  /** Forget kept tensors of a result (released, or no longer needed): the runtime frees them. */
  drop(keys: string[]): void {
    const held = keys.filter((k) => this.keptKeys.has(k));
    if (this.child && held.length) this.dropFrom(this.child, held);
  }

  private dropFrom(child: ChildProcess, keys: string[]): void {
    for (const key of keys) {
      this.keptKeys.delete(key);
      this.keptStates.delete(key);
    }
    if (child.connected) child.send({ type: 'drop', keys } satisfies ToWorker);
  }

  /**
   * Resolves once no run someone waits for has been in flight for the quiet time: background work does its own
   * host-side part (reading a head's 60 MB of outputs at 2,000 tokens) then, not beside such a run or its answer.
   */
  foregroundIdle(): Promise<void> {
    if (this.quiet()) return Promise.resolve();
    return new Promise((resolve) => {
      this.foregroundWaiters.push(resolve);
      this.afterQuiet();
    });
  }

  /** Someone is still working (on a run's outputs, or with a result in a view): the quiet time starts again now. */
  keepQuiet(): void {
    this.foregroundEnded = Math.max(this.foregroundEnded, performance.now());
  }

  /** No run someone waits for is in flight, nor came back within the quiet time. */
  private quiet(): boolean {
    return this.foreground === 0 && performance.now() >= this.foregroundEnded + QUIET_AFTER_FOREGROUND_MS;
  }

  /**
   * Once the quiet time has passed with no run someone waits for: wakes foregroundIdle's waiters and lets the next
   * background run go. One timer for both; a run someone waits for in between starts the wait again when it ends.
   */
  private afterQuiet(): void {
    if (this.quiet()) {
      const waiters = this.foregroundWaiters;
      this.foregroundWaiters = [];
      for (const w of waiters) w();
      this.pump();
      return;
    }
    if (this.quietTimer || this.foreground > 0 || (!this.foregroundWaiters.length && !this.waiting.length)) return;
    this.quietTimer = setTimeout(
      () => {
        this.quietTimer = undefined;
        this.afterQuiet();
      },
      this.foregroundEnded + QUIET_AFTER_FOREGROUND_MS - performance.now(),
    );
  }

  /**
   * Waits for a background run's turn, unless `interrupt` settles first (someone now waits for other work of the
   * caller's): true with the turn held (then `run` with `background`), false with no turn taken.
   */
  async backgroundTurn(signal?: AbortSignal, interrupt?: Promise<unknown>): Promise<boolean> {
    let go: (() => void) | undefined;
    const turn = new Promise<void>((resolve, reject) => {
      if (!this.granted && this.pending.size === 0 && this.waiting.length === 0 && this.quiet()) {
        this.granted = true;
        return resolve();
      }
      const onAbort = () => {
        this.waiting = this.waiting.filter((w) => w !== go);
        reject(new LensError('cancelled', 'cancelled'));
      };
      go = () => (signal?.removeEventListener('abort', onAbort), resolve());
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
      // Not quiet yet: the turn comes when it is.
      this.pump();
    });
    if (!interrupt) return turn.then(() => true);
    const won = await Promise.race([turn.then(() => true), interrupt.then(() => false)]);
    if (!won) {
      if (go && this.waiting.includes(go)) this.waiting = this.waiting.filter((w) => w !== go);
      // Granted in the same moment: hand the turn on.
      else {
        this.granted = false;
        this.pump();
      }
    }
    return won;
  }

  /** Lets the next background run go once the runtime process is idle. */
  private pump(): void {
    if (this.granted || this.pending.size > 0) return;
    // Someone stepping through layers asks again within moments: the cores stay theirs until they pause.
    if (!this.waiting.length) return;
    if (!this.quiet()) return this.afterQuiet();
    const next = this.waiting.shift();
    if (!next) return;
    this.granted = true;
    next();
  }

  /** Stops the runtime process for good: later runs (a result's layers included) fail with a clear message. */
  dispose(): Promise<void> {
    this.closed = true;
    return this.terminate();
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
    // The next child has nothing in flight: a waiting background run may go (it starts that child, as any run would).
    this.pending = new Map();
    this.granted = false;
    queueMicrotask(() => this.pump());
  }
}
