// Which computed layers stay in memory: one process-wide least-recently-used list, bounded in bytes, over the
// layers of every live result. A layer of v3-large at 2048 tokens is 1 GiB (4 matrices × 16 heads × n²), so
// results never keep all of theirs; the most recent layer always stays, whatever its size. An evicted layer that
// an analysis still holds (the Diff view holds one layer of two results) stays readable until it lets go; one
// that nobody holds is freed by a collection run as soon as the evicting call has returned.
import { collectGarbage } from './collect-garbage';

/** What the cache needs from a result: a way to drop one of its layers. */
export interface LayerOwner {
  readonly cacheId: number;
  evict(layer: number): void;
}

interface Entry {
  owner: WeakRef<LayerOwner>;
  layer: number;
  bytes: number;
}

export const DEFAULT_LAYER_CACHE_BYTES = 1024 * 2 ** 20;
const MIN_ENTRIES = 1;
/** Evicted bytes that make a collection worth its pause (a few ms to tens of ms). */
export const COLLECT_AFTER_BYTES = 128 * 2 ** 20;

export class LayerCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  /** Bytes evicted since the last collection. */
  private unreleased = 0;
  private collecting = false;
  private readonly gone = new FinalizationRegistry<number>((id) => this.forget(id));

  constructor(
    private maxBytes = DEFAULT_LAYER_CACHE_BYTES,
    /** Evicted bytes after which a collection runs, and how (tests watch it). */
    readonly collection: { afterBytes: number; collect: () => void } = { afterBytes: COLLECT_AFTER_BYTES, collect: collectGarbage },
  ) {}

  get bytes(): number {
    return this.total;
  }

  get limit(): number {
    return this.maxBytes;
  }

  setLimit(bytes: number): void {
    this.maxBytes = bytes;
    this.trim();
  }

  /** Starts tracking an owner (its entries leave the cache when it is garbage-collected). */
  track(owner: LayerOwner): void {
    this.gone.register(owner, owner.cacheId);
  }

  /** Records that `owner` now holds `layer` (most recently used), evicting older layers beyond the budget. */
  add(owner: LayerOwner, layer: number, bytes: number): void {
    const key = `${owner.cacheId}:${layer}`;
    const old = this.entries.get(key);
    if (old) this.total -= old.bytes;
    this.entries.delete(key);
    this.entries.set(key, { owner: new WeakRef(owner), layer, bytes });
    this.total += bytes;
    this.trim();
  }

  /**
   * Makes room for a layer about to be computed: evicts least recently used layers until `bytes` more fit (all
   * of them if need be), so a long input never holds the old layers and the new one at once.
   */
  reserve(bytes: number): void {
    for (const [key, e] of this.entries) {
      if (this.total + bytes <= this.maxBytes) return;
      this.drop(key, e);
    }
  }

  /** Marks a layer as just used. */
  touch(owner: LayerOwner, layer: number): void {
    const key = `${owner.cacheId}:${layer}`;
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.entries.set(key, e);
  }

  /** Forgets every layer of an owner (collected); does not call evict. Returns the bytes forgotten. */
  forget(cacheId: number): number {
    let bytes = 0;
    for (const [key, e] of this.entries) {
      if (key.startsWith(`${cacheId}:`)) {
        this.total -= e.bytes;
        bytes += e.bytes;
        this.entries.delete(key);
      }
    }
    return bytes;
  }

  /** Forgets every layer of a released owner: they are garbage now, and count towards a collection. */
  released(cacheId: number): void {
    this.willFree(this.forget(cacheId));
  }

  private trim(): void {
    for (const [key, e] of this.entries) {
      if (this.total <= this.maxBytes || this.entries.size <= MIN_ENTRIES) return;
      this.drop(key, e);
    }
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.total -= e.bytes;
    e.owner.deref()?.evict(e.layer);
    this.willFree(e.bytes);
  }

  /** Layers let go: once enough bytes are, a collection frees them. */
  private willFree(bytes: number): void {
    this.unreleased += bytes;
    // In a later task, not now: an evicted layer's weak reference holds it until the current task ends, and a
    // layer about to be computed allocates its buffers only after its first run returns (see explain.ts).
    if (this.unreleased < this.collection.afterBytes || this.collecting) return;
    this.collecting = true;
    setImmediate(() => {
      this.collecting = false;
      this.unreleased = 0;
      this.collection.collect();
    });
  }
}

/** The cache every on-demand result of this process shares. */
export const layerCache = new LayerCache();
