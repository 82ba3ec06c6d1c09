// The bytes of the tensors that do not lie in place in a checkpoint file (inflated from a compressed zip entry,
// gathered from a strided view, byte-swapped), copied once into a cache entry of their own (`tensors.bin`), so
// that the process that runs the model reads every weight as a plain byte range and never parses the checkpoint
// itself. The load process writes the entry; the caller only opens it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type CacheEntry, openEntry, type OpenOptions } from '../cache/cache-entry';
import { entryKey } from '../cache/cache-layout';
import type { Checkpoint } from '../checkpoint';
import { LensError } from '../errors';
import type { TensorData } from '../types';

export const COPIES_FILE = 'tensors.bin';
const COPIES_VERSION = 'deberta-lens-copies-1';

export interface TensorCopies {
  /** Where each copied tensor's bytes start in tensors.bin, by name (tensors sharing a storage share a place). */
  at: Map<string, number>;
  /** The entry holding tensors.bin, held until release(); undefined when every tensor lies in place. */
  entry?: CacheEntry;
  file?: string;
}

function copied(t: TensorData): boolean {
  return t.file === undefined || t.offset === undefined;
}

/** The tensors.bin layout: one place per tensor, or per shared storage. */
function layout(ck: Checkpoint): { order: TensorData[]; at: Map<string, number> } {
  const at = new Map<string, number>();
  const shared = new Map<string, number>();
  const order: TensorData[] = [];
  let end = 0;
  for (const t of ck.weights.values()) {
    if (!copied(t)) continue;
    const before = t.shareKey === undefined ? undefined : shared.get(t.shareKey);
    if (before !== undefined) {
      at.set(t.name, before);
      continue;
    }
    at.set(t.name, end);
    if (t.shareKey !== undefined) shared.set(t.shareKey, end);
    order.push(t);
    end += t.byteLength;
  }
  return { order, at };
}

/**
 * Opens (with `write`: builds if needed) the copies entry of `ck`. Without `write` a missing entry (evicted since
 * the load process wrote it) is a one-line error asking to load the model again.
 */
export function openTensorCopies(ck: Checkpoint, cacheDir: string, write: boolean, opts: OpenOptions = {}): TensorCopies {
  const { order, at } = layout(ck);
  if (order.length === 0) return { at };
  const key = entryKey(COPIES_VERSION, ck.hash);
  const entry = openEntry(
    cacheDir,
    key,
    { name: ck.name, dir: ck.dir, hash: ck.hash },
    ck.hashed,
    (w) => {
      if (!write)
        throw new LensError(
          `${ck.dir}: the copied weights of this model left the graph cache while it was loading; load the model again.`,
          'runtime',
        );
      const fd = fs.openSync(path.join(w.dir, COPIES_FILE), 'w');
      try {
        // The plain read: the NaN/Inf check happens where the copy is read (checkpoint-wire.ts), as it did here.
        for (const t of order) fs.writeSync(fd, ((t as { unchecked?: () => Uint8Array }).unchecked ?? (() => t.read()))());
      } finally {
        fs.closeSync(fd);
      }
    },
    opts,
  );
  return { at, entry, file: path.join(entry.dir, COPIES_FILE) };
}
