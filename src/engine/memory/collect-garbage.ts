// A full garbage collection on request. A computed layer is a few large ArrayBuffers that only a collection
// frees; after the layer cache evicts one (up to 1 GiB at long inputs), waiting for V8 to collect on its own let
// the next layer be allocated beside it, doubling the peak.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

let gc: (() => void) | null | undefined;

/** Runs a full collection where the runtime allows one (Node and Electron do); false where it cannot. */
export function collectGarbage(): boolean {
  if (gc === undefined) {
    try {
      const exposed = (globalThis as { gc?: unknown }).gc;
      if (typeof exposed === 'function') gc = exposed as () => void;
      else {
        // Exposed to one new context only, then the flag is put back, so no other code in this process sees `gc`.
        v8.setFlagsFromString('--expose-gc');
        gc = vm.runInNewContext('gc') as () => void;
        v8.setFlagsFromString('--no-expose-gc');
      }
    } catch {
      gc = null;
    }
  }
  if (!gc) return false;
  gc();
  return true;
}
