// A wait that gives up the moment its signal aborts: the verbs that start a rerun process (sweep, occlusion) use it.
import { LensError } from '../errors';

/** `p`, or a rejection the moment `signal` aborts (starting a rerun process is not itself cancellable). */
export function unlessAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  p.catch(() => undefined); // a start that fails after the abort is nobody's error
  const cancelled = () => new LensError('cancelled', 'cancelled');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
