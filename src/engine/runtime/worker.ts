// The runtime process: owns the onnxruntime sessions, so a long run never blocks the caller and a native crash
// (or a kill to cancel a run) cannot take the caller — the VS Code extension host — down with it. It dies with
// its parent: when the IPC channel closes or the parent process is gone, it exits.
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type * as Ort from 'onnxruntime-node';
import type { DerivedTensors, FeedTensor, FromWorker, GraphName, KeptSlice, SpilledTensor, ToWorker } from './messages';

// Loaded lazily so a missing native binary becomes an error message, not a crash at import.
let ort: typeof Ort | undefined;
const sessions = new Map<GraphName, Ort.InferenceSession>();
/** Tensors kept between runs (layer weights), by key then feed name. */
const kept = new Map<string, Record<string, FeedTensor>>();
/** The settings the sessions were created with, for graphs added later. */
let loadedOptions: Ort.InferenceSession.SessionOptions | undefined;
// Runs are serialised: one run at a time, in arrival order.
let queue: Promise<void> = Promise.resolve();

// A full collection after each run returns its output buffers (onnxruntime-node allocates new ones every run) to
// the heap while nothing waits; with the allocator settings in session.ts the next run reuses that warm memory
// instead of faulting in fresh pages. Enabled here rather than with --expose-gc, which Electron may not accept.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;
/** Output bytes since the last collection. Small outputs (a hidden state, the heads' few numbers) skip it: a full
 *  collection costs milliseconds, and the next run (the heads right after a forward) would wait for it. */
let outputBytes = 0;
const COLLECT_AFTER_BYTES = 32 << 20;

if (!process.send) throw new Error('the runtime worker must be started with an IPC channel');
/** Settles once the last message posted is written to the parent. */
let posted: Promise<void> = Promise.resolve();
const post = (m: FromWorker) => {
  posted = new Promise((resolve) => process.send!(m, undefined, {}, () => resolve()));
};

process.on('message', (msg: ToWorker) => {
  queue = queue
    .then(() => handle(msg))
    .catch((e: unknown) => {
      post({
        type: 'error',
        id: msg.type === 'load' || msg.type === 'drop' ? undefined : msg.id,
        message: String((e as Error)?.message ?? e),
      });
    })
    // Once handle() has returned, nothing references the run's outputs any more. After its answer is written: a
    // collection (5–15 ms at 2,000 tokens) blocks this process, and the answer would wait for it.
    .then(() => posted)
    .then(() => {
      if (outputBytes < COLLECT_AFTER_BYTES) return;
      outputBytes = 0;
      collectGarbage();
    });
});
// The parent went away: nothing left to serve. 'disconnect' covers an orderly exit and a crash of the parent
// (its end of the channel closes); the parent-id check covers a parent killed while the channel lingers.
process.on('disconnect', () => process.exit(0));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();

async function load(msg: Extract<ToWorker, { type: 'load' }>): Promise<void> {
  if (!ort) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy require, so a missing native binary fails this message, not the import
    ort = require('onnxruntime-node') as typeof Ort;
    // Provider failures come back as exceptions (and are reported); keep onnxruntime's own stderr quiet.
    ort.env.logLevel = 'fatal';
  }
  const t0 = performance.now();
  const tried: { provider: string; error: string }[] = [];
  for (const provider of msg.providers) {
    try {
      const opts: Ort.InferenceSession.SessionOptions = {
        executionProviders: [provider],
        intraOpNumThreads: msg.threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        // No arena: its blocks grow by doubling and are never returned, which at long inputs held GBs the run no
        // longer used (v3-large, 2048 tokens: 6.9 GB resident with it, 3.4 GB without); not slower here.
        enableCpuMemArena: false,
        // No spinning after a run: the engine runs graphs in several processes one after the other (encoder, then
        // the layers rerun for an intervention, then the heads), and a finished session's spinning threads took
        // the cores from the next one (v3-base, one layer rerun at 128 tokens: 31 ms right after a forward, 17 ms
        // without spinning; the forward itself was not slower).
        extra: { session: { intra_op: { allow_spinning: '0' } } },
      };
      // All graphs on the same provider, so a layer recomputed later matches the forward pass that kept its input.
      const created = new Map<GraphName, Ort.InferenceSession>();
      for (const [name, file] of Object.entries(msg.graphs) as [GraphName, string | undefined][])
        if (file) created.set(name, await ort.InferenceSession.create(file, opts));
      for (const [name, session] of created) sessions.set(name, session);
      loadedOptions = opts;
      post({ type: 'loaded', provider, tried, ms: performance.now() - t0 });
      return;
    } catch (e) {
      tried.push({ provider, error: String((e as Error)?.message ?? e).split('\n')[0] ?? '' });
    }
  }
  throw new Error(`no execution provider could load the model: ${tried.map((t) => `${t.provider}: ${t.error}`).join('; ')}`);
}

/** Feeds from kept tensors (rows of them: views, not copies). */
function keptFeeds(from: Record<string, KeptSlice>, into: Record<string, Ort.Tensor>): void {
  for (const [name, { key, rows }] of Object.entries(from)) {
    const t = kept.get(key)?.[name];
    if (!t) throw new Error(`kept tensor ${key}/${name} is missing`);
    const all = t.dims[0] ?? 0;
    const [r0, r1] = rows ?? [0, all];
    const rowLength = t.data.length / all;
    const data = t.data.subarray(r0 * rowLength, r1 * rowLength) as Float32Array;
    into[name] = new ort!.Tensor('float32', data, [r1 - r0, ...t.dims.slice(1)]);
  }
}

/** Computes and keeps the derived tensors this process does not hold yet. */
async function derive(list: DerivedTensors[]): Promise<void> {
  for (const d of list) {
    if (kept.has(d.key)) continue;
    const session = sessions.get(d.graph);
    if (!session) throw new Error(`graph ${d.graph} not loaded`);
    const feeds: Record<string, Ort.Tensor> = {};
    keptFeeds(d.feeds, feeds);
    const result = await session.run(feeds, d.fetches);
    kept.set(
      d.key,
      Object.fromEntries(
        d.fetches.map((name): [string, FeedTensor] => {
          const t = outputOf(result, name);
          return [name, { type: 'float32', data: t.data as Float32Array, dims: [...t.dims] }];
        }),
      ),
    );
  }
}

/** A fetched output of a run: onnxruntime returns every name asked for, so a missing one is a bug here. */
function outputOf(result: Record<string, Ort.Tensor>, name: string): Ort.Tensor {
  const t = result[name];
  if (!t) throw new Error(`the run returned no output ${name}`);
  return t;
}

/** Graphs added to a loaded process: same provider and settings as the ones it loaded with. */
async function add(msg: Extract<ToWorker, { type: 'add' }>): Promise<void> {
  if (!ort || !loadedOptions) throw new Error('model not loaded');
  for (const [name, file] of Object.entries(msg.graphs) as [GraphName, string | undefined][]) {
    if (file && !sessions.has(name)) sessions.set(name, await ort.InferenceSession.create(file, loadedOptions));
  }
  post({ type: 'added', id: msg.id });
}

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === 'load') return load(msg);
  if (msg.type === 'add') return add(msg);
  if (msg.type === 'drop') {
    for (const key of msg.keys) kept.delete(key);
    return;
  }
  const session = sessions.get(msg.graph);
  if (!ort || !session) throw new Error('model not loaded');
  for (const k of msg.keep ?? []) kept.set(k.key, k.tensors);
  const tDerive = performance.now();
  await derive(msg.derive ?? []);
  let deriveMs = performance.now() - tDerive;
  const feeds: Record<string, Ort.Tensor> = {};
  for (const [name, t] of Object.entries(msg.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  keptFeeds(msg.kept ?? {}, feeds);
  // Fetched by name: onnxruntime-node copies every output into a new ArrayBuffer whatever we pass.
  const t0 = performance.now();
  const keepNames = (msg.keepOutputs ?? []).map((k) => k.output).filter((name) => !msg.fetches.includes(name));
  const first = await session.run(feeds, [...msg.fetches, ...keepNames]);
  const ms = performance.now() - t0;
  for (const k of msg.keepOutputs ?? []) {
    const t = outputOf(first, k.output);
    kept.set(k.key, { [k.as]: { type: 'float32', data: t.data as Float32Array, dims: [...t.dims] } });
  }
  // What is spilled, by name: the first run's outputs, or the chained run's (after the first's when asked).
  let result: Record<string, Ort.Tensor> = first;
  let fetches = msg.fetches;
  let thenMs: number | undefined;
  if (msg.then) {
    const next = sessions.get(msg.then.graph);
    if (!next) throw new Error(`graph ${msg.then.graph} not loaded`);
    const tThenDerive = performance.now();
    await derive(msg.then.derive ?? []);
    deriveMs += performance.now() - tThenDerive;
    const nextFeeds: Record<string, Ort.Tensor> = {};
    for (const [name, t] of Object.entries(msg.then.feeds)) nextFeeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    for (const [name, output] of Object.entries(msg.then.from)) nextFeeds[name] = outputOf(first, output);
    keptFeeds(msg.then.kept ?? {}, nextFeeds);
    const t1 = performance.now();
    const second = await next.run(nextFeeds, msg.then.fetches);
    thenMs = performance.now() - t1;
    if (msg.then.spillFirst) {
      const clash = msg.then.fetches.find((name) => msg.fetches.includes(name));
      if (clash) throw new Error(`output ${clash} is fetched by both chained runs`);
      result = { ...first, ...second };
      fetches = [...msg.fetches, ...msg.then.fetches];
    } else {
      result = second;
      fetches = msg.then.fetches;
    }
  }
  const tSpill = performance.now();
  const tensors: SpilledTensor[] = [];
  // The caller created the file; no truncation: a reused spill file keeps its pages, and the caller knows every offset.
  const fd = fs.openSync(msg.spill, fs.constants.O_RDWR);
  try {
    let offset = 0;
    for (const name of fetches) {
      const t = outputOf(result, name);
      const data = t.data as Float32Array;
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
      tensors.push({ name, dims: [...t.dims], offset, length: bytes.length });
      offset += bytes.length;
    }
    outputBytes += offset;
  } finally {
    fs.closeSync(fd);
  }
  const spillMs = performance.now() - tSpill;
  post({ type: 'result', id: msg.id, spill: msg.spill, tensors, ms, spillMs, deriveMs, thenMs });
}
