// `buildAtlas` in a worker thread (./atlas-thread.ts): the caller's thread stays free however big the corpus (a
// folder of 100,000 files to list, a 1 MB paragraph to tokenize, every window's sums to add). A cancel asks the
// thread to stop, which writes its checkpoint first; the thread is terminated only if it does not end by itself.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { LensError } from '../../engine';
import type { AtlasJson, AtlasOptions } from './atlas';
import type { AtlasThreadData, FromAtlasThread, ToAtlasThread } from './atlas-thread-protocol';

/** How long a cancelled thread has to write its checkpoint and stop its runtime process before it is terminated. */
const CANCEL_GRACE_MS = 10_000;

/** Beside the bundle (dist/atlas-thread.js) or beside this file (tsc output): the same name either way. */
const threadScript = () => path.join(__dirname, 'atlas-thread.js');

export interface ThreadedAtlasOptions extends Pick<AtlasOptions, 'onProgress' | 'onSkip' | 'onStage' | 'signal'> {
  /** The engine's diagnostic lines (model loading). */
  log?: (line: string) => void;
}

export function buildAtlasInThread(data: AtlasThreadData, o: ThreadedAtlasOptions = {}): Promise<AtlasJson> {
  return new Promise<AtlasJson>((resolve, reject) => {
    if (o.signal?.aborted) return reject(new LensError('cancelled', 'cancelled'));
    const worker = new Worker(threadScript(), { workerData: data });
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener('abort', onAbort);
      clearTimeout(grace);
      f();
    };
    const onAbort = () => {
      worker.postMessage({ type: 'cancel' } satisfies ToAtlasThread);
      grace = setTimeout(() => {
        void worker.terminate();
        finish(() => reject(new LensError('cancelled', 'cancelled')));
      }, CANCEL_GRACE_MS);
      grace.unref();
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: FromAtlasThread) => {
      switch (m.type) {
        case 'stage':
          return o.onStage?.(m.line);
        case 'log':
          return o.log?.(m.line);
        case 'skip':
          return o.onSkip?.(m.line);
        case 'progress':
          return o.onProgress?.({ texts: m.texts, windows: m.windows, tokens: m.tokens, file: m.file });
        case 'done':
          return finish(() => resolve(m.atlas));
        case 'failed':
          return finish(() => reject(new LensError(m.message, m.code)));
      }
    });
    worker.on('error', (e) => finish(() => reject(new LensError(`the atlas thread failed: ${e.message}`, 'runtime'))));
    worker.on('exit', (code) =>
      finish(() => reject(new LensError(`the atlas thread stopped (exit code ${code}) before the atlas was done`, 'runtime'))),
    );
  });
}
