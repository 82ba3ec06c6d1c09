// The runtime worker: owns the onnxruntime session so a long run never blocks the caller's thread.
import { parentPort } from 'node:worker_threads';
import type * as Ort from 'onnxruntime-node';
import type { FromWorker, OutTensor, ToWorker } from './messages';

// Loaded lazily so a missing native binary becomes an error message, not a crash at import.
let ort: typeof Ort | undefined;
let session: Ort.InferenceSession | undefined;

const port = parentPort;
if (!port) throw new Error('runtime worker must run in a worker thread');
const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

port.on('message', (msg: ToWorker) => {
  handle(msg).catch((e: unknown) => post({ type: 'error', id: msg.type === 'run' ? msg.id : undefined, message: String((e as Error)?.message ?? e) }));
});

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === 'load') {
    if (!ort) {
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
  const t0 = performance.now();
  const result = await session.run(feeds, msg.fetches);
  const ms = performance.now() - t0;
  const outputs: Record<string, OutTensor> = {};
  const transfer: ArrayBuffer[] = [];
  for (const name of msg.fetches) {
    const t = result[name];
    const data = t.data as Float32Array;
    outputs[name] = { data, dims: [...t.dims] };
    if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) transfer.push(data.buffer as ArrayBuffer);
  }
  post({ type: 'result', id: msg.id, outputs, ms }, transfer);
}
