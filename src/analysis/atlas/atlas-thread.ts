// The head atlas in a worker thread (what "Build Head Atlas for Folder…" runs): listing the folder, reading its
// files, tokenizing and adding every window's matrices into the per-head sums all happen here, so the extension
// host's thread only hears progress lines. The model still runs in its own process, which this thread starts.
import { parentPort, workerData } from 'node:worker_threads';
import { isLensError, openModel } from '../../engine';
import { buildAtlas } from './atlas';
import type { AtlasThreadData, FromAtlasThread, ToAtlasThread } from './atlas-thread-protocol';

const port = parentPort!;
const data = workerData as AtlasThreadData;
const send = (m: FromAtlasThread) => port.postMessage(m);
const stop = new AbortController();
port.on('message', (m: ToAtlasThread) => {
  if (m.type === 'cancel') stop.abort();
});

async function run(): Promise<void> {
  send({ type: 'stage', line: 'loading the model…' });
  const model = await openModel(data.modelDir, { ...data.engine, log: (line) => send({ type: 'log', line }) });
  try {
    const atlas = await buildAtlas(model, {
      ...data.options,
      signal: stop.signal,
      onStage: (line) => send({ type: 'stage', line }),
      onSkip: (line) => send({ type: 'skip', line }),
      onProgress: (p) => send({ type: 'progress', ...p }),
    });
    send({ type: 'done', atlas });
  } finally {
    await model.dispose();
  }
}

run().then(
  () => port.close(),
  (e: unknown) => {
    send({
      type: 'failed',
      message: isLensError(e) ? e.message : String((e as Error)?.message ?? e),
      code: isLensError(e) ? e.code : undefined,
    });
    port.close();
  },
);
