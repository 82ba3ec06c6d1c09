// explain(): one forward pass that keeps each layer's input states, and the one-layer computation that turns
// those states back into a layer's matrices when a view (or the CLI) asks for that layer.
import type { ExplainInput } from '../api';
import { assertUnchanged, type Checkpoint, requireWeight } from '../checkpoint';
import { isLensError, LensError } from '../errors';
import { assertFiniteForward, assertFiniteLayer } from './finite-outputs';
import { DECOMPOSITION_TERMS, DecompositionInput, type DecompositionTerm, EMBEDDING_PARTS } from '../graph/bert-decomposition';
import { contentWeightFeeds, LAST_HIDDEN, LayerInput, layerInputOutput, layerOutput, layerWeights, PositionsInput, positionWeightFeeds, REL_OUTPUT, scaleOf } from '../graph/deberta-graph';
import { toFloat32 } from '../graph/float32';
import { graphInputs, type Int64Feeds, relativeInputs } from '../graph/graph-inputs';
import { availableMemory, estimateMemory, formatBytes, layerChunkHeads } from '../memory/estimate';
import { ExplainResult, type LayerPreview, type LayerSource, type LayerTensors } from '../result';
import type { DerivedTensors, FeedTensor, KeptSlice } from '../runtime/messages';
import type { ChainedRunSpec, KeptFeeds, RuntimeSession } from '../runtime/session';
import type { SpillReader } from '../runtime/spill';
import { missingTokenizerError } from '../tokenizer';
import type { TokenizerHandle } from '../tokenizer/types';
import type { ModelInfo, ModelSpec, TermName, Token } from '../types';

/** What explain needs of an open model. */
export interface ExplainContext {
  readonly info: ModelInfo;
  readonly checkpoint: Checkpoint;
  readonly tokenizer: TokenizerHandle | undefined;
  readonly session: RuntimeSession;
  readonly maxTokens: number;
  /** The setting or flag that sets maxTokens, named in messages. */
  readonly maxTokensName?: string;
  /** Working memory of one one-layer run in bytes (heads are computed in chunks that fit). */
  readonly layerChunkBytes?: number;
}

interface Prepared {
  ids: number[];
  tokens: Token[];
  /** Absent: all 0 (one text, or ids). */
  tokenTypes?: number[];
}

/** text → [CLS] tokens [SEP] with offsets; ids → as given (no specials added), validated against the vocabulary.
 *  Tokenizing runs in the tokenizer's thread, under its time budget. */
export async function prepareInput(model: Pick<ExplainContext, 'tokenizer' | 'checkpoint'>, input: ExplainInput, signal?: AbortSignal): Promise<Prepared> {
  const spec = model.checkpoint.spec;
  const tok = model.tokenizer;
  if ((input.text === undefined) === (input.ids === undefined)) throw new LensError('give either text or ids to explain, not both or neither');
  if (input.pair !== undefined && input.text === undefined) throw new LensError('a sentence pair needs text for its first part; ids are fed as given');
  if (input.ids !== undefined) {
    if (input.ids.length === 0) throw new LensError('no ids to explain: the id list is empty');
    const specials = tok ? new Set(Object.values(tok.special)) : new Set<number>();
    input.ids.forEach((id, k) => {
      if (!Number.isInteger(id) || id < 0 || id >= spec.vocabSize) {
        throw new LensError(`id ${id} at position ${k} is outside the model's vocabulary (0…${spec.vocabSize - 1})`);
      }
    });
    const pieces = tok ? await tok.pieces(input.ids, signal) : [];
    const tokens = input.ids.map((id, k): Token => ({ id, text: pieces[k] ?? `#${id}`, start: 0, end: 0, special: specials.has(id) }));
    return { ids: input.ids, tokens };
  }
  if (!tok) throw missingTokenizerError(model.checkpoint.dir, spec.architecture);
  const { tokens, ids, tokenTypeIds } = await tok.modelInput(input.text!, input.pair, signal);
  // [CLS] and [SEP] cover no characters; a [MASK] written in the text does, and counts as text.
  if (tokens.every((t) => t.special && t.start === t.end)) throw new LensError('nothing to explain: the text is empty or only whitespace');
  for (const t of tokens) {
    if (t.id >= spec.vocabSize) throw new LensError(`the tokenizer produced id ${t.id} for "${t.text}", outside the model's vocabulary of ${spec.vocabSize}: the tokenizer files do not belong to this model`, 'corrupt');
  }
  if (input.pair !== undefined && spec.typeVocabSize < 2) {
    throw new LensError(`this model has ${spec.typeVocabSize} token types (type_vocab_size in config.json), so it cannot tell a pair's two texts apart: explain one text`, 'invalid-input');
  }
  return { ids, tokens, tokenTypes: input.pair !== undefined ? tokenTypeIds : undefined };
}

/** Refuses a length over the limit, beyond an absolute-position table, or beyond what memory can hold. */
export function checkLength(model: ExplainContext, n: number, available = availableMemory()): void {
  const spec = model.checkpoint.spec;
  const setting = model.maxTokensName ?? 'maxTokens';
  if (n > model.maxTokens) {
    throw new LensError(`the input is ${n} tokens, over the limit of ${model.maxTokens} (${setting}): select less text or raise the limit`, 'too-long');
  }
  if (spec.positionBiasedInput && n > spec.maxPositionEmbeddings) {
    throw new LensError(`the input is ${n} tokens, but this model has absolute positions for only ${spec.maxPositionEmbeddings}: select less text`, 'too-long');
  }
  const need = estimateMemory(spec, n).total;
  if (need > available) {
    throw new LensError(
      `the input is ${n} tokens: explaining it needs about ${formatBytes(need)} of memory and ${formatBytes(available)} is free: select less text, free memory, or lower ${setting} so such inputs are refused up front`,
      'too-long',
    );
  }
}

/** The requested layers, validated. */
function layersOf(model: ExplainContext, layers?: number[]): number[] {
  const L = model.checkpoint.spec.numLayers;
  const out = layers ?? Array.from({ length: L }, (_, l) => l);
  for (const l of out) {
    if (!Number.isInteger(l) || l < 0 || l >= L) throw new LensError(`layer ${l} does not exist: this model has layers 0…${L - 1}`);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

export function int64Feeds(feeds: Int64Feeds): Record<string, FeedTensor> {
  const out: Record<string, FeedTensor> = {};
  for (const [name, data] of Object.entries(feeds)) out[name] = { type: 'int64', data, dims: [data.length] };
  return out;
}

export async function explainWith(model: ExplainContext, input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult> {
  const t0 = performance.now();
  const { ids, tokens, tokenTypes } = await prepareInput(model, input, signal);
  checkLength(model, ids.length);
  const layers = layersOf(model, input.layers);
  const t1 = performance.now();
  const spec = model.checkpoint.spec;
  const n = ids.length, D = spec.hiddenSize;
  // Only the requested layers' states are kept: a later layer never needs an earlier layer's input.
  const fetches = layers.map(layerInputOutput);
  // The output of the last requested layer too (the next layer's input, or the last hidden state): only to check
  // that no requested layer overflowed, without running layers beyond it.
  const last = layers[layers.length - 1];
  const after = last + 1 < spec.numLayers ? layerInputOutput(last + 1) : LAST_HIDDEN;
  fetches.push(after);
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  if (relative) fetches.push(REL_OUTPUT);
  // BERT: the three parts of the embedding output, which layer 0's decomposition projects.
  const decomposable = spec.architecture === 'bert' && layers.includes(0);
  const partNames = Object.values(EMBEDDING_PARTS);
  if (decomposable) fetches.push(...partNames);
  const along = input.preview ? previewRun(model, n, layers, input.preview) : undefined;
  const { outputs, ms, spillMs, thenMs } = await model.session.run('forward', int64Feeds(graphInputs(spec, ids, tokenTypes)), fetches, signal, undefined, along?.run);
  let states: Float32Array, rel: Float32Array | undefined, parts: Float32Array[] | undefined, lastState: Float32Array;
  let preview: LayerPreview | undefined;
  let previewMs: number | undefined;
  try {
    states = new Float32Array(layers.length * n * D);
    layers.forEach((l, k) => outputs.read(layerInputOutput(l), states, k * n * D));
    rel = relative ? outputs.read(REL_OUTPUT) : undefined;
    parts = decomposable ? partNames.map((p) => outputs.read(p)) : undefined;
    lastState = outputs.read(after);
    assertFiniteForward(model.checkpoint.dir, layers, states, n * D, rel, lastState);
    if (along) {
      const t2 = performance.now();
      const tensors = { layer: along.layer } as LayerTensors;
      readLayerOutputs(model, n, along.heads, outputs, tensors, 0);
      assertFiniteLayer(model.checkpoint.dir, tensors);
      preview = { layer: along.layer, head: along.head, heads: along.heads, tensors };
      // The preview's part of the spill, by size: each state is n·D floats, each of its matrices n² per head.
      const previewFloats = along.run.fetches.length * along.heads * n * n;
      const spillShare = spillMs * (previewFloats / (previewFloats + fetches.length * n * D));
      previewMs = (thenMs ?? 0) + spillShare + (performance.now() - t2);
    }
  } finally {
    outputs.release();
  }
  const source = new LayerComputation(model, n, layers, states, parts);
  // The last hidden state is kept (n·D floats): fill-mask on this result then needs the heads only.
  if (after === LAST_HIDDEN) source.lastHidden = lastState;
  const info = { ...model.info, execution_provider: model.session.provider };
  return new ExplainResult(info, ids, tokens, scaleOf(spec), { layers, source, preview }, input.text, {
    tokenize_ms: t1 - t0,
    run_ms: ms,
    spill_ms: spillMs,
    total_ms: performance.now() - t0 - (previewMs ?? 0),
    ...(previewMs !== undefined ? { preview_ms: previewMs } : {}),
  }, tokenTypes, input.pair);
}

/**
 * The preview's layer run over its heads, chained after the forward pass in the same runtime call and fed the
 * forward's output (no round trip for its input state). A head or two: a small part of a layer's work.
 */
function previewRun(model: ExplainContext, n: number, layers: number[], at: NonNullable<ExplainInput['preview']>): { layer: number; head: number; heads: number; run: ChainedRunSpec } {
  const H = model.checkpoint.spec.numHeads;
  if (!layers.includes(at.layer)) throw new LensError(`the preview's layer ${at.layer} is not among the layers explained (${layers.join(', ')})`);
  if (!Number.isInteger(at.head) || at.head < 0 || at.head >= H) throw new LensError(`the preview's head ${at.head} does not exist: this model has heads 0…${H - 1}`);
  const want = at.heads ?? 1;
  if (!Number.isInteger(want) || want < 1) throw new LensError(`the preview's head count ${want} is not a whole number ≥ 1`);
  const heads = Math.min(want, H - at.head);
  const run = layerRun(model, n, at.layer, at.head, at.head + heads);
  return {
    layer: at.layer,
    head: at.head,
    heads,
    run: { graph: 'layer', feeds: run.feeds, fetches: run.fetches, from: { [LayerInput.hidden]: layerInputOutput(at.layer) }, kept: run.kept, spillFirst: true },
  };
}

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
    private readonly model: ExplainContext,
    private readonly n: number,
    layers: number[],
    states: Float32Array,
    /** BERT with layer 0 kept: content, position and rest parts of the embedding output, each [n, D]. */
    private parts?: Float32Array[],
  ) {
    this.states = states;
    this.index = new Map(layers.map((l, k) => [l, k]));
  }

  async compute(layer: number, signal?: AbortSignal): Promise<LayerTensors> {
    const states = this.states;
    if (!states) throw new LensError('this result was released; explain again', 'runtime');
    const spec = this.model.checkpoint.spec;
    const { n } = this;
    const H = spec.numHeads, D = spec.hiddenSize;
    const k = this.index.get(layer)!;
    const out = { layer } as LayerTensors;
    // A copy, not a view: IPC serialises a view's whole buffer.
    const hidden: FeedTensor = { type: 'float32', data: states.slice(k * n * D, (k + 1) * n * D), dims: [n, D] };
    const chunk = layerChunkHeads(spec, n, this.model.layerChunkBytes);
    for (let h0 = 0; h0 < H; h0 += chunk) {
      const run = layerRun(this.model, n, layer, h0, Math.min(H, h0 + chunk));
      const done = await this.runLayer({ ...run.feeds, [LayerInput.hidden]: hidden }, run.fetches, signal, run.kept);
      try {
        readLayerOutputs(this.model, n, H, done.outputs, out, h0);
      } finally {
        done.outputs.release();
      }
    }
    assertFiniteLayer(this.model.checkpoint.dir, out);
    return out;
  }

  /**
   * One layer-graph run. A run that fails because the runtime process was stopped (cancelling another explain
   * kills it) is tried once more in the fresh process: the states it needs are here, not there.
   */
  private async runLayer(feeds: Record<string, FeedTensor>, fetches: string[], signal: AbortSignal | undefined, kept: KeptFeeds) {
    try {
      return await this.model.session.run('layer', feeds, fetches, signal, kept);
    } catch (e) {
      if (!(isLensError(e) && e.code === 'runtime' && /runtime process stopped/.test(e.message)) || signal?.aborted) throw e;
      return this.model.session.run('layer', feeds, fetches, signal, kept);
    }
  }

  /** BERT's layer-0 score split by embedding part, all heads (in head chunks), from the kept parts. */
  async decomposition(signal?: AbortSignal): Promise<Record<DecompositionTerm, Float32Array>> {
    const parts = this.parts;
    if (!parts) throw new LensError('this result has no layer-0 decomposition (BERT with layer 0 only); explain again', 'runtime');
    const spec = this.model.checkpoint.spec;
    const { n } = this;
    const H = spec.numHeads, D = spec.hiddenSize, nn = n * n;
    const out = {} as Record<DecompositionTerm, Float32Array>;
    for (const t of DECOMPOSITION_TERMS) out[t] = new Float32Array(H * nn);
    const feeds: Record<string, FeedTensor> = {};
    [DecompositionInput.content, DecompositionInput.position, DecompositionInput.rest].forEach((name, k) => {
      feeds[name] = { type: 'float32', data: parts[k], dims: [n, D] };
    });
    const weights = layerWeights(spec, 0);
    const chunk = layerChunkHeads(spec, n, this.model.layerChunkBytes);
    for (let h0 = 0; h0 < H; h0 += chunk) {
      const h1 = Math.min(H, h0 + chunk);
      const kept: KeptFeeds = { sources: [{ key: weightsKey(0), tensors: () => readWeights(this.model, 0) }], feeds: {} };
      // The same kept tensors as layer 0's attention: BERT's decomposition uses exactly its query and key.
      for (const [name, w] of Object.entries(weights)) kept.feeds[name] = { key: weightsKey(0), rows: [h0 * w.rowsPerHead, h1 * w.rowsPerHead] };
      const run = await this.model.session.run('decomposition', feeds, [...DECOMPOSITION_TERMS], signal, kept);
      try {
        for (const t of DECOMPOSITION_TERMS) run.outputs.read(t, out[t], h0 * nn);
      } finally {
        run.outputs.release();
      }
    }
    return out;
  }

  release(): void {
    this.states = undefined;
    this.lastHidden = undefined;
    this.parts = undefined;
  }
}

/** Keys of what the runtime keeps: the relative table, a layer's weights, a layer's position projections. */
const TABLE_KEY = 'table';
const weightsKey = (layer: number) => `layer${layer}`;

/** The matrices a layer run returns, c2c first and probs last. */
function layerKinds(model: ExplainContext): (TermName | 'probs')[] {
  return ['c2c', ...model.info.terms.filter((t) => t !== 'c2c'), 'probs'];
}

/**
 * The one-layer run for heads [h0, h1) of `layer`, all but its input state (`LayerInput.hidden`: fed from the
 * kept states, or from the forward pass's output when the run rides along with it): index feeds, outputs, and
 * the kept weights and position projections it reads.
 */
function layerRun(model: ExplainContext, n: number, layer: number, h0: number, h1: number): { feeds: Record<string, FeedTensor>; fetches: string[]; kept: KeptFeeds } {
  const spec = model.checkpoint.spec;
  const weights = layerWeights(spec, layer);
  const positions = positionsOf(spec, layer);
  const sources = [...(positions ? [{ key: TABLE_KEY, tensors: () => readTable(model) }] : []), { key: weightsKey(layer), tensors: () => readWeights(model, layer) }];
  const kept: KeptFeeds = { sources, derive: positions ? [positions] : undefined, feeds: {} };
  for (const name of contentWeightFeeds(spec)) kept.feeds[name] = { key: weightsKey(layer), rows: [h0 * weights[name]!.rowsPerHead, h1 * weights[name]!.rowsPerHead] };
  for (const name of positions?.fetches ?? []) kept.feeds[name] = { key: positions!.key, rows: [h0 * spec.headDim, h1 * spec.headDim] };
  return { feeds: int64Feeds(relativeInputs(spec, n, false, true)), fetches: layerKinds(model).map(layerOutput), kept };
}

/** Reads a layer run's outputs into `out` (`H` heads) from head `h0` on, allocating `out`'s arrays on first use. */
function readLayerOutputs(model: ExplainContext, n: number, H: number, outputs: SpillReader, out: LayerTensors, h0: number): void {
  const nn = n * n;
  const kinds = layerKinds(model);
  // Allocated once the first run is back, by when a layer the cache evicted for this one has been collected.
  // Not zero-filled: every element is read from the runtime's output (all heads, every kind).
  for (const kind of kinds) out[kind] ??= new Float32Array(Buffer.allocUnsafeSlow(H * nn * 4).buffer, 0, H * nn);
  for (const kind of kinds) outputs.read(layerOutput(kind), out[kind], h0 * nn);
}

function readWeights(model: ExplainContext, layer: number): Record<string, FeedTensor> {
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
function readTable(model: ExplainContext): Record<string, FeedTensor> {
  assertUnchanged(model.checkpoint);
  const s = model.checkpoint.spec;
  const read = (name: string, shape: number[]): FeedTensor => ({ type: 'float32', data: toFloat32(requireWeight(model.checkpoint, name, shape)).slice(), dims: shape });
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
  const fetches = [...(spec.posAttType.includes('c2p') ? [LayerInput.posKey] : []), ...(spec.posAttType.includes('p2c') ? [LayerInput.posQuery] : [])];
  return { key: `positions${layer}`, graph: 'positions', feeds, fetches };
}

/** The forward pass alone, returning the last hidden state: the benchmark's baseline and the parity tests' check. */
export async function forwardOnly(model: ExplainContext, ids: number[], signal?: AbortSignal, tokenTypes?: number[]): Promise<{ ms: number; hidden: Float32Array }> {
  checkLength(model, ids.length);
  const { outputs, ms } = await model.session.run('forward', int64Feeds(graphInputs(model.checkpoint.spec, ids, tokenTypes)), [LAST_HIDDEN], signal);
  try {
    return { ms, hidden: outputs.read(LAST_HIDDEN) };
  } finally {
    outputs.release();
  }
}
