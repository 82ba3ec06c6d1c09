// A layer's matrices, recomputed on demand from the input state the forward pass kept, in the one-layer graph
// (and BERT's layer-0 split by embedding part). The weights and the relative table are read here and kept in the
// runtime process; explain and the intervened run both hand their kept states to LayerComputation.
import { assertUnchanged, requireWeight } from '../checkpoint';
import { at } from '../../shared/checked';
import { isLensError, LensError } from '../errors';
import { DECOMPOSITION_TERMS, DecompositionInput, type DecompositionTerm } from '../graph/bert-decomposition';
import {
  contentWeightFeeds,
  LayerInput,
  layerInputOutput,
  layerOutput,
  layerWeights,
  PositionsInput,
  positionWeightFeeds,
} from '../graph/deberta-io';
import { toFloat32 } from '../graph/float32';
import { relativeInputs } from '../graph/graph-inputs';
import { layerChunkHeads } from '../memory/estimate';
import type { LayerComputeOptions, LayerSource, LayerTensors } from '../result/explain-result';
import type { DerivedTensors, FeedTensor, KeptSlice } from '../runtime/messages';
import type { KeptFeeds } from '../runtime/session';
import type { SpillReader } from '../runtime/spill';
import type { ModelSpec, TermName } from '../types';
import { assertFiniteLayer } from './finite-outputs';
import { int64Feeds } from './input';
import type { RunBase } from './run-base';

/**
 * Recomputes one layer's attention from the input states the forward pass kept, in the one-layer graph, for all
 * heads (in chunks of heads when n is large, so the runtime's working memory stays bounded). The layer's weights
 * and the relative table are sent to the runtime process once and kept there; so are the layer's position
 * projections, which the runtime computes from them on the layer's first use (they do not depend on the text).
 */
export class LayerComputation implements LayerSource {
  private states?: Float32Array;
  lastHidden?: Float32Array;
  private readonly index: Map<number, number>;

  constructor(
    private readonly model: RunBase,
    private readonly n: number,
    private readonly layers: number[],
    states: Float32Array,
    /** BERT with layer 0 kept: content, position and rest parts of the embedding output, each [n, D]. */
    private parts?: Float32Array[],
    /** Where the runtime keeps the layers' input states (see keptStates): the forward may have kept them there. */
    private readonly statesAt = statesPrefix(),
  ) {
    this.states = states;
    this.index = new Map(layers.map((l, k) => [l, k]));
  }

  async compute(layer: number, signal?: AbortSignal, options: LayerComputeOptions = {}): Promise<LayerTensors> {
    const states = this.states;
    if (!states) throw new LensError('this result was released; explain again', 'runtime');
    const spec = this.model.checkpoint.spec;
    const { n } = this;
    const H = spec.numHeads,
      D = spec.hiddenSize;
    const k = this.index.get(layer)!;
    const out = { layer } as LayerTensors;
    // The layer's input state, kept in the runtime process: sent with the layer's first run unless the forward pass
    // kept it there (or again, to a runtime process started after a cancel). A copy, not a view: IPC serialises a
    // view's whole buffer.
    const state = {
      key: stateKey(this.statesAt, layer),
      tensors: (): Record<string, FeedTensor> => ({
        [LayerInput.hidden]: { type: 'float32', data: states.slice(k * n * D, (k + 1) * n * D), dims: [n, D] },
      }),
      bytes: n * D * 4,
    };
    const chunk = layerChunkHeads(spec, n, this.model.layerChunkBytes);
    const small = backgroundChunk(spec, n) >= H && chunk >= H;
    // A head someone waits for goes alone and first, unless one run holds the whole layer anyway (short inputs).
    const byHead = (options.first !== undefined || !!options.background) && !small;
    /** Heads whole in `out` or in `own`. */
    const done = new Set<number>();
    /**
     * Heads someone waited for, read into arrays of their own (`alone`): whole, until `out` takes them, or with the
     * kinds someone waited for only (15 MB of 60 at 2,000 tokens: the view on screen needs one), until the head's
     * whole run (in the background, before the other heads: `soon`) or a wait for another of its kinds.
     */
    const own = new Map<number, LayerTensors>();
    const all = layerKinds(this.model);
    let firstAsked = options.first !== undefined;
    for (;;) {
      const wanted = byHead ? [...(firstAsked ? [options.first!] : []), ...(options.wanted?.() ?? [])] : [];
      const soon = [...own.keys()].find((h) => !done.has(h));
      const next = nextHeadRun(H, done, byHead ? Math.min(chunk, backgroundChunk(spec, n)) : chunk, wanted, soon);
      if (!next) break;
      const [h0, h1] = next.heads;
      const run = layerRun(this.model, n, layer, h0, h1);
      // Work nobody looks at yet (a layer computed ahead, the heads after the one on screen) goes in the background:
      // the runtime session holds it back while a run someone waits for is due.
      const background = !next.wanted && (!!options.background || (options.first !== undefined && !small));
      // While this waits for its turn, a head asked for ends the wait: the loop then runs that head first.
      if (background && !(await this.model.session.backgroundTurn(signal, options.asked?.()))) continue;
      // A head someone waits for: alone, into arrays of its own, with the kinds they wait for that it lacks. Not into
      // the layer's arrays, even once they exist: those are fresh memory, and these are made ready while the runtime
      // computes. Before they exist, allocating them (~1 GB at 2,000 tokens) would make V8 collect the host's whole
      // heap (~0.2 s) first.
      const alone = next.wanted && h1 - h0 === 1;
      const had = alone ? own.get(h0) : undefined;
      const waitedFor = (alone && options.kindsOf?.(h0)) || all;
      // Another kind of a head that came with some: the reader is going through its kinds, so all it lacks come now
      // (the first switch costs the same one run, the next ones none).
      const kinds = all.filter((kind) => (had || waitedFor.includes(kind)) && !had?.[kind]);
      if (h0 === options.first) firstAsked = false;
      if (!kinds.length) {
        // What they wait for came with an earlier run (asked for twice): no run, only the news.
        options.onHeads?.(h0, h1, had!, true);
        continue;
      }
      run.kept.sources.push(state);
      run.kept.feeds[LayerInput.hidden] = { key: state.key };
      const fetches = kinds.length < all.length ? kinds.map(layerOutput) : run.fetches;
      const running = this.runLayer(run.feeds, fetches, signal, run.kept, background);
      // Arrays touched while the runtime computes: reading into fresh memory is mostly page faults.
      const ownArrays = alone ? new Promise<LayerTensors>((resolve) => setImmediate(() => resolve(headArrays(n, kinds)))) : undefined;
      const result = await running;
      // Background outputs are read once nothing someone waits for runs: not beside it on the same cores.
      if (background) await this.model.session.foregroundIdle();
      const mine = await ownArrays;
      try {
        if (mine) readHeadOutputs(result.outputs, mine, kinds);
        else {
          readLayerOutputs(this.model, n, H, result.outputs, out, h0);
          // Heads this run wrote whole: any kinds of them held on their own are not needed any more.
          for (let h = h0; h < h1; h++) own.delete(h);
          // One held head a run: copying into the layer's fresh arrays is page faults too (60 MB a head at 2,000
          // tokens, ~0.25 s in VS Code's extension host on these machines), and the host answers nothing meanwhile.
          moveOwnHeads(this.model, own, done, out, n, options, 1);
        }
      } finally {
        result.outputs.release();
      }
      const held: LayerTensors | undefined = mine ? { ...had, ...mine } : undefined;
      if (held) own.set(h0, held);
      for (let h = h0; h < h1; h++) if (!held || all.every((k) => held[k])) done.add(h);
      // Reading it took a while (at 2,000 tokens, 60 MB): the quiet time that keeps background work off the cores
      // while the head's picture is made and sent starts after it.
      if (!background) this.model.session.keepQuiet();
      if (held) options.onHeads?.(h0, h1, held, true);
      else options.onHeads?.(h0, h1, out);
    }
    if (own.size) allocateLayer(this.model, n, H, out);
    while ([...own.keys()].some((h) => done.has(h))) {
      // The rest one at a time, each when nothing someone waits for runs (see above).
      await this.model.session.foregroundIdle();
      moveOwnHeads(this.model, own, done, out, n, options, 1);
    }
    assertFiniteLayer(this.model.checkpoint.dir, out);
    return out;
  }

  /**
   * One layer-graph run. A run that fails because the runtime process was stopped (cancelling another explain
   * kills it) is tried once more in the fresh process: the states it needs are here, not there.
   */
  private async runLayer(
    feeds: Record<string, FeedTensor>,
    fetches: string[],
    signal: AbortSignal | undefined,
    kept: KeptFeeds,
    background: boolean,
  ) {
    try {
      return await this.model.session.run('layer', feeds, fetches, signal, kept, undefined, background);
    } catch (e) {
      if (!(isLensError(e) && e.code === 'runtime' && /runtime process stopped/.test(e.message)) || signal?.aborted) throw e;
      // The turn went with the failed run: the retry goes as a plain run (after a crash, rare).
      return this.model.session.run('layer', feeds, fetches, signal, kept);
    }
  }

  /** BERT's layer-0 score split by embedding part, all heads (in head chunks), from the kept parts. */
  async decomposition(signal?: AbortSignal): Promise<Record<DecompositionTerm, Float32Array>> {
    const parts = this.parts;
    if (!parts) throw new LensError('this result has no layer-0 decomposition (BERT with layer 0 only); explain again', 'runtime');
    const spec = this.model.checkpoint.spec;
    const { n } = this;
    const H = spec.numHeads,
      D = spec.hiddenSize,
      nn = n * n;
    const out = {} as Record<DecompositionTerm, Float32Array>;
    for (const t of DECOMPOSITION_TERMS) out[t] = new Float32Array(H * nn);
    const feeds: Record<string, FeedTensor> = {};
    [DecompositionInput.content, DecompositionInput.position, DecompositionInput.rest].forEach((name, k) => {
      feeds[name] = { type: 'float32', data: at(parts, k, 'embedding part'), dims: [n, D] };
    });
    const weights = layerWeights(spec, 0);
    const chunk = layerChunkHeads(spec, n, this.model.layerChunkBytes);
    for (let h0 = 0; h0 < H; h0 += chunk) {
      const h1 = Math.min(H, h0 + chunk);
      const kept: KeptFeeds = { sources: [{ key: weightsKey(0), tensors: () => readWeights(this.model, 0) }], feeds: {} };
      // The same kept tensors as layer 0's attention: BERT's decomposition uses exactly its query and key.
      for (const [name, w] of Object.entries(weights))
        kept.feeds[name] = { key: weightsKey(0), rows: [h0 * w.rowsPerHead, h1 * w.rowsPerHead] };
      const run = await this.model.session.run('decomposition', feeds, [...DECOMPOSITION_TERMS], signal, kept);
      try {
        for (const t of DECOMPOSITION_TERMS) run.outputs.read(t, out[t], h0 * nn);
      } finally {
        run.outputs.release();
      }
    }
    return out;
  }

  keepQuiet(): void {
    this.model.session.keepQuiet();
  }

  release(): void {
    if (this.states) this.model.session.drop(this.layers.map((l) => stateKey(this.statesAt, l)));
    this.states = undefined;
    this.lastHidden = undefined;
    this.parts = undefined;
  }
}

/**
 * The next heads of a layer to run, given those `done`: a head someone waits for (`wanted`, in order) alone, so
 * that it comes back after one head's work; else `soon` alone (the head on screen, when its first run returned only
 * the kinds on screen); else the next run of at most `chunk` heads not done yet, from the lowest. Undefined when
 * every head is done.
 */
export function nextHeadRun(
  H: number,
  done: ReadonlySet<number>,
  chunk: number,
  wanted: readonly number[] = [],
  soon?: number,
): { heads: [number, number]; wanted: boolean } | undefined {
  const w = wanted.find((h) => h >= 0 && h < H && !done.has(h));
  if (w !== undefined) return { heads: [w, w + 1], wanted: true };
  if (soon !== undefined && soon >= 0 && soon < H && !done.has(soon)) return { heads: [soon, soon + 1], wanted: false };
  let h0 = 0;
  while (h0 < H && done.has(h0)) h0++;
  if (h0 >= H) return undefined;
  let h1 = h0 + 1;
  while (h1 < H && h1 - h0 < chunk && !done.has(h1)) h1++;
  return { heads: [h0, h1], wanted: false };
}

/** Bytes of attention arrays one background layer run may hold: at 2,000 tokens of v3-base that is one head. */
export const BACKGROUND_CHUNK_BYTES = 128 * 2 ** 20;

/** Heads per background layer run (at least one). */
function backgroundChunk(spec: ModelSpec, n: number): number {
  return layerChunkHeads(spec, n, BACKGROUND_CHUNK_BYTES);
}

/** Keys of what the runtime keeps: the relative table, a layer's weights, a layer's position projections. */
const TABLE_KEY = 'table';
const weightsKey = (layer: number) => `layer${layer}`;

/** Each result's input states go under keys of their own (two results of one model may both be open). */
let nextStates = 1;
export function statesPrefix(): string {
  return `states${nextStates++}`;
}
const stateKey = (prefix: string, layer: number) => `${prefix}/${layer}`;

/**
 * The forward outputs the runtime process keeps for a LayerComputation with keys `prefix` (`KeptFeeds.outputs`):
 * each layer's input state stays where the layer's runs read it, instead of coming back with every run (6 MB a
 * run at 2,000 tokens of v3-base).
 */
export function keptStates(spec: ModelSpec, prefix: string, layers: number[], n: number): NonNullable<KeptFeeds['outputs']> {
  return layers.map((l) => ({
    output: layerInputOutput(l),
    key: stateKey(prefix, l),
    as: LayerInput.hidden,
    bytes: n * spec.hiddenSize * 4,
  }));
}

/** The matrices a layer run returns, c2c first and probs last. */
function layerKinds(model: RunBase): (TermName | 'probs')[] {
  return ['c2c', ...model.info.terms.filter((t) => t !== 'c2c'), 'probs'];
}

/**
 * The one-layer run for heads [h0, h1) of `layer`, all but its input state (`LayerInput.hidden`: fed from the
 * kept states, or from the forward pass's output when the run rides along with it): index feeds, outputs, and
 * the kept weights and position projections it reads.
 */
export function layerRun(
  model: RunBase,
  n: number,
  layer: number,
  h0: number,
  h1: number,
): { feeds: Record<string, FeedTensor>; fetches: string[]; kept: KeptFeeds } {
  const spec = model.checkpoint.spec;
  const weights = layerWeights(spec, layer);
  const positions = positionsOf(spec, layer);
  const sources = [
    ...(positions ? [{ key: TABLE_KEY, tensors: () => readTable(model) }] : []),
    { key: weightsKey(layer), tensors: () => readWeights(model, layer) },
  ];
  const kept: KeptFeeds = { sources, derive: positions ? [positions] : undefined, feeds: {} };
  for (const name of contentWeightFeeds(spec))
    kept.feeds[name] = { key: weightsKey(layer), rows: [h0 * weights[name]!.rowsPerHead, h1 * weights[name]!.rowsPerHead] };
  for (const name of positions?.fetches ?? []) kept.feeds[name] = { key: positions!.key, rows: [h0 * spec.headDim, h1 * spec.headDim] };
  return { feeds: int64Feeds(relativeInputs(spec, n, false, true)), fetches: layerKinds(model).map(layerOutput), kept };
}

/** Reads a layer run's outputs into `out` (`H` heads) from head `h0` on, allocating `out`'s arrays on first use. */
export function readLayerOutputs(model: RunBase, n: number, H: number, outputs: SpillReader, out: LayerTensors, h0: number): void {
  const nn = n * n;
  allocateLayer(model, n, H, out);
  for (const kind of layerKinds(model)) outputs.read(layerOutput(kind), out[kind], h0 * nn);
}

/** `out`'s arrays for `H` heads, where it has none yet. */
function allocateLayer(model: RunBase, n: number, H: number, out: LayerTensors): void {
  const nn = n * n;
  // Allocated once the first run is back, by when a layer the cache evicted for this one has been collected.
  // Not zero-filled: every element is read from the runtime's output (all heads, every kind) or copied in.
  for (const kind of layerKinds(model)) out[kind] ??= new Float32Array(Buffer.allocUnsafeSlow(H * nn * 4).buffer, 0, H * nn);
}

/**
 * Arrays for one head's run outputs of `kinds` (`[1, n, n]` each), their pages touched. Shared-memory buffers: V8
 * does not count them as external memory growth, so taking a head (60 MB at 2,000 tokens) does not first make it
 * collect the host's whole heap, as new ArrayBuffers that size do (~0.2 s on the extension host). They are copied
 * into the layer's arrays and dropped when those exist (`moveOwnHeads`), and freed with the next collection.
 */
function headArrays(n: number, kinds: readonly (TermName | 'probs')[]): LayerTensors {
  const t = {} as LayerTensors;
  for (const kind of kinds) {
    const a = new Int32Array(new SharedArrayBuffer(n * n * 4));
    // One write a page: the faults happen now, while the runtime computes, not while the outputs are read.
    for (let k = 0; k < a.length; k += 1024) a[k] = 0;
    t[kind] = new Float32Array(a.buffer);
  }
  return t;
}

/** One head's run outputs of `kinds` into `into` (from headArrays). */
function readHeadOutputs(outputs: SpillReader, into: LayerTensors, kinds: readonly (TermName | 'probs')[]): void {
  for (const kind of kinds) outputs.read(layerOutput(kind), into[kind]);
}

/**
 * Copies whole heads read on their own (`most` of them; those `done`) into the layer's arrays, once it has them, and
 * tells `onHeads` they are there now.
 */
function moveOwnHeads(
  model: RunBase,
  own: Map<number, LayerTensors>,
  done: ReadonlySet<number>,
  out: LayerTensors,
  n: number,
  options: LayerComputeOptions,
  most: number,
): void {
  if (!out.c2c) return;
  for (const [h, t] of [...own].filter(([h]) => done.has(h)).slice(0, most)) {
    for (const kind of layerKinds(model)) {
      const a = t[kind];
      if (a) out[kind]?.set(a, h * n * n);
    }
    own.delete(h);
    options.onHeads?.(h, h + 1, out);
  }
}

function readWeights(model: RunBase, layer: number): Record<string, FeedTensor> {
  // Read from the checkpoint's files, which must still hold what the forward graph was built from.
  assertUnchanged(model.checkpoint);
  const out: Record<string, FeedTensor> = {};
  for (const [name, w] of Object.entries(layerWeights(model.checkpoint.spec, layer))) {
    // slice(): a fresh buffer (the reader may hand a view of a larger one, and IPC would send all of it).
    out[name] = { type: 'float32', data: toFloat32(requireWeight(model.checkpoint, w.name, w.shape)).slice(), dims: w.shape };
  }
  return out;
}

/** The whole relative table (and its LayerNorm in v2/v3), which the positions graph projects. */
function readTable(model: RunBase): Record<string, FeedTensor> {
  assertUnchanged(model.checkpoint);
  const s = model.checkpoint.spec;
  const read = (name: string, shape: number[]): FeedTensor => ({
    type: 'float32',
    data: toFloat32(requireWeight(model.checkpoint, name, shape)).slice(),
    dims: shape,
  });
  const out: Record<string, FeedTensor> = { [PositionsInput.table]: read('encoder.rel_embeddings.weight', [2 * s.attSpan, s.hiddenSize]) };
  if (s.modelType === 'deberta-v2' && s.normRelEbd) {
    out[PositionsInput.lnWeight] = read('encoder.LayerNorm.weight', [s.hiddenSize]);
    out[PositionsInput.lnBias] = read('encoder.LayerNorm.bias', [s.hiddenSize]);
  }
  return out;
}

/** How the runtime derives layer l's position projections (undefined without relative attention). */
function positionsOf(spec: ModelSpec, layer: number): DerivedTensors | undefined {
  if (!(spec.relativeAttention && spec.posAttType.length > 0)) return undefined;
  const table = spec.modelType === 'deberta-v2' && spec.normRelEbd ? Object.values(PositionsInput) : [PositionsInput.table];
  const feeds: Record<string, KeptSlice> = {};
  for (const name of table) feeds[name] = { key: TABLE_KEY };
  for (const name of positionWeightFeeds(spec)) feeds[name] = { key: weightsKey(layer) };
  const fetches = [
    ...(spec.posAttType.includes('c2p') ? [LayerInput.posKey] : []),
    ...(spec.posAttType.includes('p2c') ? [LayerInput.posQuery] : []),
  ];
  return { key: `positions${layer}`, graph: 'positions', feeds, fetches };
}
