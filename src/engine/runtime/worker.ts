// The runtime process: owns the onnxruntime session, so a long run never blocks the caller and a native crash
// (or a kill to cancel a run) cannot take the caller — the VS Code extension host — down with it.
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import type * as Ort from 'onnxruntime-node';
import type { FromWorker, SpilledTensor, ToWorker } from './messages';

// Loaded lazily so a missing native binary becomes an error message, not a crash at import.
let ort: typeof Ort | undefined;
let session: Ort.InferenceSession | undefined;
// Runs are serialised: one session, one run at a time, in arrival order.
let queue: Promise<void> = Promise.resolve();

// A full collection after each run returns its output buffers (onnxruntime-node allocates new ones every run) to
// the heap while nothing waits; with the allocator settings in session.ts the next run reuses that warm memory
// instead of faulting in fresh pages. Enabled here rather than with --expose-gc, which Electron may not accept.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

if (!process.send) throw new Error('the runtime worker must be started with an IPC channel');
const post = (m: FromWorker) => process.send!(m);

process.on('message', (msg: ToWorker) => {
  queue = queue
    .then(() => handle(msg))
    .catch((e: unknown) => {
      post({ type: 'error', id: msg.type === 'run' ? msg.id : undefined, message: String((e as Error)?.message ?? e) });
    })
    // Once handle() has returned, nothing references the run's outputs any more.
    .then(() => collectGarbage());
});
// The parent went away: nothing left to serve.
process.on('disconnect', () => process.exit(0));

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === 'load') {
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
        session = await ort.InferenceSession.create(msg.modelPath, {
          executionProviders: [provider],
          intraOpNumThreads: msg.threads,
          interOpNumThreads: 1,
          graphOptimizationLevel: 'all',
          executionMode: 'sequential',
        });
        post({ type: 'loaded', provider, tried, ms: performance.now() - t0, outputs: [...session.outputNames] });
        return;
      } catch (e) {
        tried.push({ provider, error: String((e as Error)?.message ?? e).split('\n')[0] });
      }
    }
    throw new Error(`no execution provider could load the model: ${tried.map((t) => `${t.provider}: ${t.error}`).join('; ')}`);
  }
  if (!ort || !session) throw new Error('model not loaded');
  const feeds: Record<string, Ort.Tensor> = {};
  for (const [name, t] of Object.entries(msg.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  // Fetched by name: onnxruntime-node copies every output into a new ArrayBuffer whatever we pass (1.30 fills a
  // pre-allocated output and still returns a new copy), so pre-allocating only added memory and a copy.
  const t0 = performance.now();
  const result = await session.run(feeds, msg.fetches);
  const ms = performance.now() - t0;
  const tensors: SpilledTensor[] = [];
  // No truncation: a reused spill file keeps its pages (see spill.ts), and the caller knows every offset.
  const fd = fs.openSync(msg.spill, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  try {
    let offset = 0;
    for (const name of msg.fetches) {
      const data = result[name].data as Float32Array;
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done, offset + done);
      tensors.push({ name, dims: [...result[name].dims], offset, length: bytes.length });
      offset += bytes.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  const spillMs = performance.now() - t0 - ms;
  post({ type: 'result', id: msg.id, spill: msg.spill, tensors, ms, spillMs });
}
