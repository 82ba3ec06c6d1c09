// explain(): one forward pass that keeps each layer's input states (a layer's matrices are computed from them when
// a view or the CLI asks for that layer: ./layer.ts), with an optional preview of a few heads run alongside.
import type { ExplainInput } from '../api';
import { last } from '../../shared/checked';
import { LensError } from '../errors';
import { EMBEDDING_PARTS } from '../graph/bert-decomposition';
import { LAST_HIDDEN, LayerInput, layerInputOutput, REL_OUTPUT, scaleOf } from '../graph/deberta-io';
import { graphInputs } from '../graph/graph-inputs';
import { ExplainResult, type LayerPreview, type LayerTensors } from '../result/explain-result';
import type { ChainedRunSpec, KeptFeeds } from '../runtime/session';
import { assertFiniteForward, assertFiniteLayer } from './finite-outputs';
import { checkLength, int64Feeds, prepareInput } from './input';
import { keptStates, LayerComputation, layerRun, readLayerOutputs, statesPrefix } from './layer';
import type { RunContext } from './run-context';

/** The requested layers, validated. */
function layersOf(model: RunContext, layers?: number[]): number[] {
  const L = model.checkpoint.spec.numLayers;
  const out = layers ?? Array.from({ length: L }, (_, l) => l);
  for (const l of out) {
    if (!Number.isInteger(l) || l < 0 || l >= L) throw new LensError(`layer ${l} does not exist: this model has layers 0…${L - 1}`);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

export async function explainWith(model: RunContext, input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult> {
  const t0 = performance.now();
  const { ids, tokens, tokenTypes, pairOffset } = await prepareInput(model, input, signal);
  checkLength(model, ids.length);
  const layers = layersOf(model, input.layers);
  const t1 = performance.now();
  const spec = model.checkpoint.spec;
  const n = ids.length,
    D = spec.hiddenSize;
  // Only the requested layers' states are kept: a later layer never needs an earlier layer's input.
  const fetches = layers.map(layerInputOutput);
  // The output of the last requested layer too (the next layer's input, or the last hidden state): only to check
  // that no requested layer overflowed, without running layers beyond it.
  const lastLayer = last(layers, 'the layers explained');
  const after = lastLayer + 1 < spec.numLayers ? layerInputOutput(lastLayer + 1) : LAST_HIDDEN;
  fetches.push(after);
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  if (relative) fetches.push(REL_OUTPUT);
  // BERT: the three parts of the embedding output, which layer 0's decomposition projects.
  const decomposable = spec.architecture === 'bert' && layers.includes(0);
  const partNames = Object.values(EMBEDDING_PARTS);
  if (decomposable) fetches.push(...partNames);
  const along = input.preview ? previewRun(model, n, layers, input.preview) : undefined;
  // The runtime process keeps the layers' input states too: a layer computed later reads its state there.
  const statesAt = statesPrefix();
  const keptOutputs = keptStates(spec, statesAt, layers, n);
  const kept: KeptFeeds = { sources: [], feeds: {}, outputs: keptOutputs };
  const { outputs, ms, spillMs, thenMs } = await model.session.run(
    'forward',
    int64Feeds(graphInputs(spec, ids, tokenTypes)),
    fetches,
    signal,
    kept,
    along?.run,
  );
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
  } catch (e) {
    model.session.drop(keptOutputs.map((o) => o.key));
    throw e;
  } finally {
    outputs.release();
  }
  const source = new LayerComputation(model, n, layers, states, parts, statesAt);
  // The last hidden state is kept (n·D floats): fill-mask on this result then needs the heads only.
  if (after === LAST_HIDDEN) source.lastHidden = lastState;
  const info = { ...model.info, execution_provider: model.session.provider };
  return new ExplainResult(
    info,
    ids,
    tokens,
    scaleOf(spec),
    { layers, source, preview },
    input.text,
    {
      tokenize_ms: t1 - t0,
      run_ms: ms,
      spill_ms: spillMs,
      total_ms: performance.now() - t0 - (previewMs ?? 0),
      ...(previewMs !== undefined ? { preview_ms: previewMs } : {}),
    },
    tokenTypes,
    input.pair,
    pairOffset,
  );
}

/**
 * The preview's layer run over its heads, chained after the forward pass in the same runtime call and fed the
 * forward's output (no round trip for its input state). A head or two: a small part of a layer's work.
 */
function previewRun(
  model: RunContext,
  n: number,
  layers: number[],
  at: NonNullable<ExplainInput['preview']>,
): { layer: number; head: number; heads: number; run: ChainedRunSpec } {
  const H = model.checkpoint.spec.numHeads;
  if (!layers.includes(at.layer))
    throw new LensError(`the preview's layer ${at.layer} is not among the layers explained (${layers.join(', ')})`);
  if (!Number.isInteger(at.head) || at.head < 0 || at.head >= H)
    throw new LensError(`the preview's head ${at.head} does not exist: this model has heads 0…${H - 1}`);
  const want = at.heads ?? 1;
  if (!Number.isInteger(want) || want < 1) throw new LensError(`the preview's head count ${want} is not a whole number ≥ 1`);
  const heads = Math.min(want, H - at.head);
  const run = layerRun(model, n, at.layer, at.head, at.head + heads);
  return {
    layer: at.layer,
    head: at.head,
    heads,
    run: {
      graph: 'layer',
      feeds: run.feeds,
      fetches: run.fetches,
      from: { [LayerInput.hidden]: layerInputOutput(at.layer) },
      kept: run.kept,
      spillFirst: true,
    },
  };
}
