import type { MatrixKind, ModelInfo, TermName, Token } from './types';

/** Per-layer tensors as the runtime produced them: each `[heads, n, n]` float32, row-major. */
export interface LayerTensors {
  layer: number;
  c2c: Float32Array;
  c2p?: Float32Array;
  p2c?: Float32Array;
  probs: Float32Array;
}

export interface ExplainTimings {
  tokenize_ms: number;
  run_ms: number;
  /** The runtime process writing the outputs to its spill file. */
  spill_ms: number;
  total_ms: number;
}

/**
 * The one result type of `explain()`. Tensors stay in host memory; views ask for slices, which are
 * zero-copy subarrays (copy them before transferring to a webview).
 */
export class ExplainResult {
  readonly n: number;
  readonly heads: number;
  private readonly byLayer = new Map<number, LayerTensors>();
  private readonly scoreCache = new Map<number, Float32Array>();
  private releaseHook?: () => void;

  constructor(
    readonly model: ModelInfo,
    readonly inputIds: number[],
    readonly tokens: Token[],
    readonly scale: number,
    layers: LayerTensors[],
    readonly text?: string,
    readonly timings?: ExplainTimings,
  ) {
    this.n = inputIds.length;
    this.heads = model.heads;
    for (const l of layers) this.byLayer.set(l.layer, l);
  }

  /**
   * Frees the runtime's copy of the outputs (a result from explain() reads them on first access); tensors read
   * before stay, reading others afterwards fails. Garbage collection does the same, later.
   */
  release(): void {
    const hook = this.releaseHook;
    this.releaseHook = undefined;
    hook?.();
  }

  /** Set by explain(): how to free the runtime's copy of this result's outputs. */
  onRelease(hook: () => void): void {
    this.releaseHook = hook;
  }

  /** Layers present in this result (all, or those asked for with `layers`). */
  get layers(): number[] {
    return [...this.byLayer.keys()].sort((a, b) => a - b);
  }

  get terms(): TermName[] {
    return this.model.terms;
  }

  has(kind: MatrixKind): boolean {
    return kind === 'c2c' || kind === 'scores' || kind === 'probs' || this.model.terms.includes(kind);
  }

  /** `[heads, n, n]` for one layer. `scores` = (c2c + c2p + p2c) / scale, computed on first use. */
  tensor(layer: number, kind: MatrixKind): Float32Array {
    const l = this.byLayer.get(layer);
    if (!l) throw new RangeError(`layer ${layer} is not in this result (have ${this.layers.join(',')})`);
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

  /** One value: query i attends to key j. */
  value(layer: number, head: number, kind: MatrixKind, i: number, j: number): number {
    return this.tensor(layer, kind)[(head * this.n + i) * this.n + j];
  }

  private scores(l: LayerTensors): Float32Array {
    let s = this.scoreCache.get(l.layer);
    if (s) return s;
    s = new Float32Array(l.c2c.length);
    const inv = 1 / this.scale;
    for (let k = 0; k < s.length; k++) {
      s[k] = (l.c2c[k] + (l.c2p ? l.c2p[k] : 0) + (l.p2c ? l.p2c[k] : 0)) * inv;
    }
    this.scoreCache.set(l.layer, s);
    return s;
  }
}
