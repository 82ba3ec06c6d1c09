import type { DecompositionTerm } from '../../shared/kinds';
import { at } from '../../shared/checked';
import { LensError } from '../errors';
import { type LayerCache, layerCache, type LayerOwner } from '../memory/layer-cache';
import type { MatrixKind, ModelInfo, TermName, Token } from '../types';

/** One layer's matrices for every head: each `[heads, n, n]` float32, row-major. */
export interface LayerTensors {
  layer: number;
  c2c: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  probs: Float32Array;
}

/** Where an on-demand result gets a layer from: a one-layer computation from the states the forward pass kept. */
/** How a layer is computed: `first`, a head to compute before the others; `onHeads`, told each time heads [h0, h1)
 *  are in `t` (its arrays hold every head; the others are filled later). A source may ignore both. */
export interface LayerComputeOptions {
  /** A head to compute before the others (someone waits for it); the others then go in the background. */
  first?: number;
  /** Nobody waits for this layer yet (a prefetch): every run goes in the background. */
  background?: boolean;
  /** Heads someone waits for now (asked between runs): each is run next, alone, ahead of the background. */
  wanted?: () => number[];
  /** The kinds someone waits for of a wanted head, `first` included (undefined: every kind): its run may return only
   *  those. */
  kindsOf?: (head: number) => (TermName | 'probs')[] | undefined;
  /** A promise that settles when a head is next asked for: a computation waiting for a background turn stops
   *  waiting and runs it. */
  asked?: () => Promise<void>;
  /** `alone`: `t` holds just head h0 (`[1, n, n]` arrays), read on its own because someone waits for it; perhaps
   *  only the kinds they wait for (`kindsOf`), the others undefined. */
  onHeads?: (h0: number, h1: number, t: LayerTensors, alone?: boolean) => void;
}

export interface LayerSource {
  compute(layer: number, signal?: AbortSignal, options?: LayerComputeOptions): Promise<LayerTensors>;
  /** BERT: layer 0's score split by embedding part (c2c, c2p, p2c, p2p, rest), each [heads, n, n] in score units. */
  decomposition?(signal?: AbortSignal): Promise<Layer0Decomposition>;
  /** The encoder's last hidden state `[n, D]` when the forward pass ran every layer: the prediction heads read it
   *  instead of running the encoder again. Undefined once released. */
  readonly lastHidden?: Float32Array;
  /** Frees what the source keeps (the layers' input states). */
  release(): void;
  /** Someone is working with the result now: work nobody waits for holds back for a while (see `busy`). */
  keepQuiet?(): void;
}

/** The five parts of BERT's layer-0 score; their sum is the score. */
export type Layer0Decomposition = Record<DecompositionTerm, Float32Array>;

export interface ExplainTimings {
  tokenize_ms: number;
  /** The forward pass in onnxruntime (inside the runtime process). */
  run_ms: number;
  /** The runtime process writing the kept states to its spill file. */
  spill_ms: number;
  /** Tokens in to result out, less `layer_ms`. */
  total_ms: number;
  /** With a preview (`preview` in the input): its run in the runtime process, its share of the spill and reading
   *  it. Not part of `total_ms`. */
  preview_ms?: number;
}

/** Heads [head, head + heads) of one layer, computed with the forward pass: every matrix `[heads, n, n]`. */
export interface LayerPreview {
  layer: number;
  head: number;
  heads: number;
  tensors: LayerTensors;
}

let nextCacheId = 1;

/**
 * The one result type of `explain()`. A result from the engine keeps only what recomputes any layer exactly (each
 * layer's input states); a layer's matrices are computed when first asked for (`load`) and kept in a
 * process-wide cache bounded in bytes. Results built from arrays (an .npz, tests) hold every layer.
 * `tensor`/`slice`/`value` read a layer that is loaded; `load` or `stream` first for the others.
 */
export class ExplainResult implements LayerOwner {
  readonly n: number;
  readonly heads: number;
  readonly cacheId = nextCacheId++;
  private readonly present: number[];
  private readonly loaded = new Map<number, LayerTensors>();
  /** Layers the cache evicted that someone may still hold (an analysis in progress): reused while alive. */
  private readonly evicted = new Map<number, WeakRef<LayerTensors>>();
  private readonly inflight = new Map<number, Promise<LayerTensors>>();
  /** Layers being computed: the heads already there (a view shows its head before the layer is done). */
  private readonly partial = new Map<
    number,
    {
      tensors?: LayerTensors;
      /** Heads in arrays of their own (onHeads' `alone`), until they move into `tensors`. */
      own?: Map<number, LayerTensors>;
      ready: Set<number>;
      waiters: Map<number, (() => void)[]>;
      /** What the waiters of a head wait for: its run need return only these. */
      kinds: Map<number, Set<TermName | 'probs'>>;
      asked: { promise: Promise<void>; resolve: () => void };
    }
  >();
  private readonly scoreCache = new WeakMap<LayerTensors, Float32Array>();
  private readonly source?: LayerSource;
  private readonly cache?: LayerCache;
  private isReleased = false;
  private preview?: LayerPreview;
  private decomposition?: Promise<Layer0Decomposition>;

  constructor(
    readonly model: ModelInfo,
    readonly inputIds: number[],
    readonly tokens: Token[],
    readonly scale: number,
    /** On demand: `preview` is heads of a layer computed with the forward pass (see `previewSlice`). */
    layers: LayerTensors[] | { layers: number[]; source: LayerSource; cache?: LayerCache; preview?: LayerPreview },
    readonly text?: string,
    readonly timings?: ExplainTimings,
    /** Token types for a sentence pair (0 up to the first [SEP], then 1); absent: all 0. */
    readonly tokenTypeIds?: number[],
    /** The second text of a sentence pair (its tokens' offsets are into it). */
    readonly pair?: string,
    /** Where the pair starts in the caller's text: its tokens' offsets are from there (ExplainInput.pairOffset). */
    readonly pairOffset?: number,
  ) {
    this.n = inputIds.length;
    this.heads = model.heads;
    if (Array.isArray(layers)) {
      for (const l of layers) this.loaded.set(l.layer, l);
      this.present = [...this.loaded.keys()].sort((a, b) => a - b);
    } else {
      this.present = [...layers.layers].sort((a, b) => a - b);
      this.source = layers.source;
      this.cache = layers.cache ?? layerCache;
      this.cache.track(this);
      this.preview = layers.preview;
    }
  }

  /** Whether layer0Decomposition() can answer: BERT, with layer 0 among the layers kept. */
  get hasDecomposition(): boolean {
    return !!this.source?.decomposition && this.model.architecture === 'bert' && this.present.includes(0) && !this.isReleased;
  }

  /** BERT's exact split of layer 0's scores by what entered the embedding: computed once, on first use. */
  layer0Decomposition(signal?: AbortSignal): Promise<Layer0Decomposition> {
    if (!this.hasDecomposition)
      return Promise.reject(new LensError('no layer-0 decomposition: it exists for BERT results that include layer 0', 'runtime'));
    this.decomposition ??= this.source!.decomposition!(signal).catch((e: unknown) => {
      this.decomposition = undefined;
      throw e;
    });
    return this.decomposition;
  }

  /** The encoder's last hidden state `[n, D]`, when the forward pass ran to the end and the result is not released. */
  get lastHidden(): Float32Array | undefined {
    return this.isReleased ? undefined : this.source?.lastHidden;
  }

  /** Layers this result can give (all, or those asked for with `layers`). */
  get layers(): number[] {
    return [...this.present];
  }

  get terms(): TermName[] {
    return this.model.terms;
  }

  get released(): boolean {
    return this.isReleased;
  }

  /** Bytes of one layer's four matrices (what loading a layer costs). */
  get layerBytes(): number {
    return (2 + this.terms.length) * this.heads * this.n * this.n * 4;
  }

  has(kind: MatrixKind): boolean {
    return kind === 'c2c' || kind === 'scores' || kind === 'probs' || this.model.terms.includes(kind);
  }

  isLoaded(layer: number): boolean {
    return this.loaded.has(layer);
  }

  /**
   * Resolves once one head of a layer can be read with `headSlice` — before the rest of the layer when the layer
   * is computed now: that head goes first (at 2,000 tokens a layer of v3-base is 12 heads × 4 matrices of 16 MB).
   * The whole layer is still loaded, and cached, after it. With `kind`, only that kind of the head need be there:
   * the head's run then returns just that kind (a quarter of the outputs), and the head runs whole later.
   */
  async loadHead(layer: number, head: number, signal?: AbortSignal, kind?: MatrixKind): Promise<void> {
    if (head < 0 || head >= this.heads) throw new RangeError(`head ${head} out of range 0..${this.heads - 1}`);
    if (this.loaded.has(layer) || this.previewSlice(layer, head, 'c2c')) return;
    const full = this.load(layer, signal, head, false, kind);
    const part = this.partial.get(layer);
    if (!part) return void (await full);
    // Ready with the kinds asked for: a head read first may hold only the kinds its first asker wanted.
    const kinds = this.matricesOf(kind);
    while (!(part.ready.has(head) && kinds.every((k) => this.headSlice(layer, head, k) !== undefined))) {
      const there = new Promise<void>((resolve) => part.waiters.set(head, [...(part.waiters.get(head) ?? []), resolve]));
      part.kinds.set(head, new Set([...(part.kinds.get(head) ?? []), ...kinds]));
      // The computation may be waiting for a background turn: it runs this head next instead.
      part.asked.resolve();
      if (await Promise.race([full.then(() => true), there.then(() => false)])) return;
    }
  }

  /** The matrices a layer run returns that `kind` is read from (every one when undefined). */
  private matricesOf(kind?: MatrixKind): (TermName | 'probs')[] {
    const terms: TermName[] = ['c2c', ...this.model.terms.filter((t) => t !== 'c2c')];
    return kind === undefined ? [...terms, 'probs'] : kind === 'scores' ? terms : [kind];
  }

  /** `[n, n]` for one head of a layer that is loaded, or being loaded with that head already there; undefined if
   *  neither (see `loadHead`). */
  headSlice(layer: number, head: number, kind: MatrixKind): Float32Array | undefined {
    if (this.loaded.has(layer) || this.evicted.get(layer)?.deref()) return this.slice(layer, head, kind);
    const preview = this.previewSlice(layer, head, kind);
    if (preview) return preview;
    const part = this.partial.get(layer);
    if (!part?.ready.has(head) || !this.has(kind)) return undefined;
    const own = part.own?.get(head);
    const [t, at] = own ? [own, 0] : [part.tensors, head];
    if (!t) return undefined;
    const nn = this.n * this.n;
    if (kind === 'scores') return t.c2c ? this.headScores(t, at) : undefined;
    return t[kind]?.subarray(at * nn, (at + 1) * nn);
  }

  /** One layer's matrices, computed on first use (all heads in one one-layer run), then cached. `first`: a head the
   *  computation does before the others (loadHead); `background`: nobody waits for the layer yet (prefetch). Heads
   *  loadHead asks for while the layer computes are done next. */
  load(layer: number, signal?: AbortSignal, first?: number, background = false, kind?: MatrixKind): Promise<LayerTensors> {
    if (!this.present.includes(layer))
      return Promise.reject(new RangeError(`layer ${layer} is not in this result (have ${this.present.join(',')})`));
    const have = this.loaded.get(layer);
    if (have) {
      this.cache?.touch(this, layer);
      return Promise.resolve(have);
    }
    if (this.isReleased || !this.source) return Promise.reject(new LensError('this result was released; explain again', 'runtime'));
    const alive = this.evicted.get(layer)?.deref();
    this.evicted.delete(layer);
    if (alive) {
      this.loaded.set(layer, alive);
      this.cache?.add(this, layer, this.layerBytes);
      return Promise.resolve(alive);
    }
    let p = this.inflight.get(layer);
    if (!p) {
      const source = this.source;
      this.cache?.reserve(this.layerBytes);
      const part = { ready: new Set<number>(), waiters: new Map(), kinds: new Map(), asked: signalled() } as NonNullable<
        ReturnType<typeof this.partial.get>
      >;
      this.partial.set(layer, part);
      // The head asked for first needs only the kinds asked for, as a head asked for later.
      if (first !== undefined && kind !== undefined) part.kinds.set(first, new Set(this.matricesOf(kind)));
      const onHeads = (h0: number, h1: number, t: LayerTensors, alone = false) => {
        if (alone) (part.own ??= new Map()).set(h0, t);
        else {
          part.tensors = t;
          for (let h = h0; h < h1; h++) part.own?.delete(h);
        }
        for (let h = h0; h < h1; h++) {
          part.ready.add(h);
          for (const resolve of part.waiters.get(h) ?? []) resolve();
          part.waiters.delete(h);
          part.kinds.delete(h);
        }
      };
      const wanted = () => [...part.waiters.keys()];
      const kindsOf = (h: number) => {
        const k = part.kinds.get(h);
        return k && [...k];
      };
      /** Settles when a head is asked for after this call (each call gets a fresh one). */
      const asked = () => (part.asked = signalled()).promise;
      p = source.compute(layer, signal, { first, background, onHeads, wanted, kindsOf, asked }).then(
        (t) => {
          this.inflight.delete(layer);
          this.partial.delete(layer);
          if (this.isReleased) throw new LensError('this result was released; explain again', 'runtime');
          this.loaded.set(layer, t);
          this.cache?.add(this, layer, this.layerBytes);
          return t;
        },
        (e: unknown) => {
          this.inflight.delete(layer);
          this.partial.delete(layer);
          throw e;
        },
      );
      this.inflight.set(layer, p);
    }
    return p;
  }

  /**
   * Computes a layer in the background (what a reader opens next), unless it is there already or it would not fit
   * the layer cache beside one more layer: a prefetch never evicts the layer in view. Failures are left to the
   * request that needs the layer.
   */
  prefetch(layer: number): void {
    if (this.isReleased || !this.source || !this.present.includes(layer) || this.loaded.has(layer) || this.inflight.has(layer)) return;
    if (this.cache && 2 * this.layerBytes > this.cache.limit) return;
    this.load(layer, undefined, undefined, true).catch(() => undefined);
  }

  /**
   * The given layers (default: all) one at a time, for analyses that keep only a running result: yields each
   * layer's number once it is loaded; read it (tensor, slice) before asking for the next. Numbers, not the
   * tensors: a `for await` loop holds its last value while the next is computed, which kept two 1 GiB layers of
   * a long input alive at once.
   */
  async *stream(layers: readonly number[] = this.present, signal?: AbortSignal): AsyncGenerator<number> {
    for (const l of layers) {
      await this.load(l, signal);
      yield l;
    }
  }

  /** Called by the layer cache: forget a layer (it is recomputed if asked for again). */
  evict(layer: number): void {
    const t = this.loaded.get(layer);
    if (!this.source || !t) return;
    this.loaded.delete(layer);
    this.evicted.set(layer, new WeakRef(t));
  }

  /**
   * Someone is working with the result now (a view's request): the rest of a layer and the layers computed ahead,
   * and reading their outputs (60 MB a head at 2,000 tokens), wait until they have paused, as after a run someone
   * waited for. A view's answer made from what is there (a term switch) then does not wait behind them.
   */
  busy(): void {
    this.source?.keepQuiet?.();
  }

  /** Frees the kept states and every computed layer; loading a layer afterwards fails. */
  release(): void {
    if (this.isReleased || !this.source) return;
    this.isReleased = true;
    this.cache?.released(this.cacheId);
    this.loaded.clear();
    this.evicted.clear();
    this.decomposition = undefined;
    this.preview = undefined;
    this.source.release();
  }

  /** `[heads, n, n]` for one loaded layer. `scores` = (c2c + c2p + p2c) / scale, computed on first use. */
  tensor(layer: number, kind: MatrixKind): Float32Array {
    const l = this.loaded.get(layer) ?? this.evicted.get(layer)?.deref();
    if (!l) {
      this.checkLayer(layer);
      throw new LensError(`layer ${layer} is not loaded: load it first (result.load(${layer}))`, 'runtime');
    }
    if (kind === 'scores') return this.scores(l);
    const t = l[kind];
    if (!t) throw new RangeError(`this model has no ${kind} term (terms: ${this.model.terms.join(', ')})`);
    return t;
  }

  /** `[n, n]` for one head: a view, not a copy. */
  slice(layer: number, head: number, kind: MatrixKind): Float32Array {
    if (head < 0 || head >= this.heads) throw new RangeError(`head ${head} out of range 0..${this.heads - 1}`);
    const nn = this.n * this.n;
    return this.tensor(layer, kind).subarray(head * nn, (head + 1) * nn);
  }

  /** The layer and heads of the preview computed with the forward pass, if any (and the result is not released). */
  get previewAt(): { layer: number; head: number; heads: number } | undefined {
    const p = this.isReleased ? undefined : this.preview;
    return p && { layer: p.layer, head: p.head, heads: p.heads };
  }

  /**
   * `[n, n]` for one head from the preview computed with the forward pass, when it holds that layer and head (and
   * the result is not released); undefined otherwise. Equal to `slice()` once the layer is loaded.
   */
  previewSlice(layer: number, head: number, kind: MatrixKind): Float32Array | undefined {
    const p = this.isReleased ? undefined : this.preview;
    if (!p || p.layer !== layer || head < p.head || head >= p.head + p.heads || !this.has(kind)) return undefined;
    const nn = this.n * this.n,
      k = head - p.head;
    return (kind === 'scores' ? this.scores(p.tensors) : p.tensors[kind])?.subarray(k * nn, (k + 1) * nn);
  }

  /** One value: query i attends to key j. */
  value(layer: number, head: number, kind: MatrixKind, i: number, j: number): number {
    return at(this.tensor(layer, kind), (head * this.n + i) * this.n + j, 'cell');
  }

  private checkLayer(layer: number): void {
    if (!this.present.includes(layer)) throw new RangeError(`layer ${layer} is not in this result (have ${this.present.join(',')})`);
  }

  /** One head's scores from a layer being loaded (not cached: the whole layer's are, once it is there). */
  private headScores(l: LayerTensors, head: number): Float32Array {
    const nn = this.n * this.n,
      o = head * nn;
    const s = new Float32Array(nn);
    const inv = 1 / this.scale;
    for (let k = 0; k < nn; k++) s[k] = (l.c2c[o + k]! + (l.c2p ? l.c2p[o + k]! : 0) + (l.p2c ? l.p2c[o + k]! : 0)) * inv;
    return s;
  }

  private scores(l: LayerTensors): Float32Array {
    let s = this.scoreCache.get(l);
    if (s) return s;
    s = new Float32Array(l.c2c.length);
    const inv = 1 / this.scale;
    for (let k = 0; k < s.length; k++) {
      s[k] = (l.c2c[k]! + (l.c2p ? l.c2p[k]! : 0) + (l.p2c ? l.p2c[k]! : 0)) * inv;
    }
    this.scoreCache.set(l, s);
    return s;
  }
}

/** A promise with its resolve. */
function signalled(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
