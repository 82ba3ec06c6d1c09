// The concrete model: loads a checkpoint, builds (or reuses) its graphs, starts its runtime process, and hands
// itself as the RunContext to the verbs in run/ (which never import it).
import type {
  AblatedRunInput,
  AblateInput,
  AblateResult,
  EngineOptions,
  EmdPassesResult,
  ExplainInput,
  LensModel,
  ModelSummary,
  OccludeInput,
  OcclusionResult,
  PredictInput,
  PredictResult,
  SweepInput,
  SweepResult,
  WorkEstimate,
} from '../api';
import { DEFAULT_CACHE_MAX_GB, defaultCacheDir, hashStoreOf } from '../cache/cache-layout';
import { type Checkpoint, loadCheckpoint } from '../checkpoint';
import type { CacheEntry } from '../cache/cache-entry';
import { type CachedGraph, ensureGraph } from '../graph/graph-cache';
import type { GraphRecipe } from '../graph/graph-recipes';
import type { ExplainResult } from '../result/explain-result';
import { ablateWith } from '../run/ablate';
import { explainAblatedWith } from '../run/ablated-run';
import { explainWith } from '../run/explain';
import { HeadSession } from '../run/head-session';
import { occludeWith } from '../run/occlusion';
import { patchWith } from '../run/patch';
import { PatchSessions } from '../run/patch-batch';
import type { PatchInput, PatchResult } from '../api';
import { OcclusionSessions } from '../run/occlusion-batch';
import { emdPassesWith } from '../run/emd-passes';
import { predictExplained, predictWith } from '../run/predict';
import type { GraphCacheSettings, RunContext } from '../run/run-context';
import { estimateWith } from '../run/estimate';
import { sweepWith } from '../run/sweep';
import { sweepEmdWith } from '../run/sweep-emd';
import { TailSessions } from '../run/tail-sessions';
import { providerOrder } from '../runtime/execution-providers';
import { RuntimeSession } from '../runtime/session';
import { defaultThreads } from '../runtime/threads';
import type { TokenizerHandle } from '../tokenizer/types';
import type { ExecutionProviderSetting, ModelInfo } from '../types';
import { resolveModelDir } from './model-dir';
import { fromWire, type WireCheckpoint } from './checkpoint-wire';
import { buildIsolated, inspectIsolated, loadBudget, openIsolated } from './isolated-load';
import { summarize, tryTokenizer } from './model-summary';
import { openTensorCopies } from './tensor-copies';

export { encoderParameters } from './model-summary';

export { DEFAULT_MODEL, resolveModelDir } from './model-dir';
/** Inputs longer than this are refused unless maxTokens says otherwise; longer ones are also checked against free memory. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Reads config, weights index and tokenizer: what Select Model and `deberta-lens info` need, no graph build. */
export async function inspectModel(dirArg: string, opts: Pick<EngineOptions, 'isolate'> = {}): Promise<ModelSummary> {
  const dir = resolveModelDir(dirArg);
  if (opts.isolate) return inspectIsolated(dir);
  const ck = await loadCheckpoint(dir, { hash: false }); // a summary shows no hash: no need to read every byte
  const tok = await tryTokenizer(ck.dir, ck);
  await tok?.dispose();
  return summarize(ck, tok);
}

export interface LoadTimings {
  build_ms: number;
  session_ms: number;
  total_ms: number;
  graph_cached: boolean;
}

class OpenModel implements LensModel, RunContext {
  readonly maxTokens: number;
  readonly maxTokensName?: string;
  readonly layerChunkBytes?: number;
  readonly executionProvider?: ExecutionProviderSetting;

  constructor(
    readonly info: ModelInfo,
    readonly summary: ModelSummary,
    readonly checkpoint: Checkpoint,
    readonly tokenizer: TokenizerHandle | undefined,
    readonly session: RuntimeSession,
    readonly loadTimings: LoadTimings,
    private readonly graph: CachedGraph,
    readonly threads: number,
    readonly graphCache: GraphCacheSettings,
    options: EngineOptions,
  ) {
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.maxTokensName = options.maxTokensName;
    this.layerChunkBytes = options.layerChunkBytes;
    this.executionProvider = options.executionProvider;
  }

  private headSession?: HeadSession;
  private tailSessions?: TailSessions;
  private occlusionSessions?: OcclusionSessions;
  private patchSessions?: PatchSessions;

  /** The prediction heads and their own runtime session, started on the first prediction. */
  get heads(): HeadSession {
    return (this.headSession ??= new HeadSession(this));
  }

  /** The graphs of the layers from one layer on, for interventions, each started on first use. */
  get tails(): TailSessions {
    return (this.tailSessions ??= new TailSessions(this));
  }

  explain(input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult> {
    return explainWith(this, input, signal);
  }

  predict(input: PredictInput, signal?: AbortSignal): Promise<PredictResult> {
    return predictWith(this, input, signal);
  }

  predictExplained(result: ExplainResult, input: Pick<PredictInput, 'positions' | 'top'>, signal?: AbortSignal): Promise<PredictResult> {
    return predictExplained(this, result, input, signal);
  }

  emdPasses(input: ExplainInput, signal?: AbortSignal): Promise<EmdPassesResult> {
    return emdPassesWith(this, input, signal);
  }

  ablate(input: AblateInput, signal?: AbortSignal): Promise<AblateResult> {
    return ablateWith(this, input, signal);
  }

  explainAblated(input: AblatedRunInput, signal?: AbortSignal): Promise<ExplainResult> {
    return explainAblatedWith(this, input, signal);
  }

  sweep(input: SweepInput, signal?: AbortSignal): Promise<SweepResult> {
    // The Enhanced Mask Decoder's heads are ranked apart (run/sweep-emd.ts): its own reruns, read through it.
    return input.emd ? sweepEmdWith(this, input, signal) : sweepWith(this, input, signal);
  }

  occlude(input: OccludeInput, signal?: AbortSignal): Promise<OcclusionResult> {
    return occludeWith(this, input, signal, (this.occlusionSessions ??= new OcclusionSessions(this)));
  }

  estimate(input: ExplainInput, signal?: AbortSignal): Promise<WorkEstimate> {
    return estimateWith(this, input, signal);
  }

  /** Activation patching (run/patch.ts): a patch spec's restored fraction, or a trace's grid. */
  patch(input: PatchInput, signal?: AbortSignal): Promise<PatchResult> {
    return patchWith(this, input, signal, (this.patchSessions ??= new PatchSessions(this)));
  }

  async dispose(): Promise<void> {
    try {
      await Promise.all([
        this.session.dispose(),
        this.headSession?.dispose(),
        this.tailSessions?.dispose(),
        this.occlusionSessions?.dispose(),
        this.patchSessions?.dispose(),
        this.tokenizer?.dispose(),
      ]);
    } finally {
      this.graph.release();
    }
  }
}
export type { OpenModel };

interface Loaded {
  ck: Checkpoint;
  /** The cache entry of the tensors the load process copied (isolated loads only). */
  copies?: CacheEntry;
  /** Isolated loads: the checkpoint as byte ranges, what a graph built on first use is built from (in a child). */
  wire?: WireCheckpoint;
  graphBuilt: boolean;
}

/** The checkpoint read in this process. */
async function loadHere(dir: string, graphCache: GraphCacheSettings): Promise<Loaded> {
  return { ck: await loadCheckpoint(dir, { hashStore: hashStoreOf(graphCache.dir) }), graphBuilt: false };
}

/** The checkpoint read, hashed and its graphs built in a load process under a budget; here only byte ranges. */
async function loadIsolated(dir: string, graphCache: GraphCacheSettings): Promise<Loaded> {
  const { options } = graphCache;
  const wire = await openIsolated({
    dir,
    cacheDir: graphCache.dir,
    hashStore: hashStoreOf(graphCache.dir),
    maxGB: options.maxGB,
    headGroup: options.headGroup,
    log: options.log,
  });
  const ck = fromWire(wire.checkpoint);
  const copies = openTensorCopies(ck, graphCache.dir, false, options);
  // The copies this process reads are the ones it holds open (the path is its own, not the load process's word).
  const held = copies.file ? { ...wire.checkpoint, copies: copies.file } : wire.checkpoint;
  return { ck: copies.file ? fromWire(held) : ck, copies: copies.entry, graphBuilt: wire.graphBuilt, wire: held };
}

/** Loads a checkpoint, builds (or reuses) its ONNX graphs and starts a runtime session in a child process. */
export async function openModel(dirArg: string, opts: EngineOptions = {}): Promise<OpenModel> {
  const t0 = performance.now();
  const dir = resolveModelDir(dirArg);
  // Every graph of this model (the encoder's, the heads', the reruns') is cached with these settings.
  const cacheDir = opts.cacheDir ?? defaultCacheDir();
  const options = { maxGB: opts.cacheMaxGB ?? DEFAULT_CACHE_MAX_GB, log: opts.log, headGroup: opts.attentionHeadGroup };
  const { ck, copies, graphBuilt, wire } = opts.isolate
    ? await loadIsolated(dir, { dir: cacheDir, options })
    : await loadHere(dir, { dir: cacheDir, options });
  const budget = loadBudget(opts.graphBuildBudget);
  // Isolated: graphs built on first use are built by a load process too, from the byte ranges this one holds.
  const buildElsewhere = wire
    ? async (recipe: GraphRecipe, what: string): Promise<void> => {
        await buildIsolated({ checkpoint: wire, recipe, what, cacheDir, maxGB: options.maxGB, log: opts.log }, budget);
      }
    : undefined;
  const graphCache: GraphCacheSettings = { dir: cacheDir, options, ...(buildElsewhere ? { buildElsewhere } : {}) };
  let tokenizer: TokenizerHandle | undefined;
  let graph: CachedGraph;
  try {
    tokenizer = await tryTokenizer(ck.dir, ck);
    // Isolated: the load process built the graphs, so this opens the entry it wrote (and holds it).
    const opened = ensureGraph(ck, graphCache.dir, graphCache.options);
    graph = { ...opened, built: opened.built || graphBuilt, release: () => (opened.release(), copies?.release()) };
  } catch (e) {
    copies?.release();
    await tokenizer?.dispose();
    throw e;
  }
  const t1 = performance.now();
  const threads = opts.threads ?? defaultThreads();
  const session = new RuntimeSession(
    { forward: graph.modelPath, layer: graph.layerPath, decomposition: graph.decompositionPath, positions: graph.positionsPath },
    providerOrder(opts.executionProvider ?? 'auto'),
    threads,
  );
  try {
    await session.start();
  } catch (e) {
    // A graph the runtime refused leaves its process waiting: stop it, and let the entry be evicted.
    await Promise.all([session.dispose(), tokenizer?.dispose()]);
    graph.release();
    throw e;
  }
  for (const t of session.providerErrors) opts.log?.(`execution provider ${t.provider} unavailable (${t.error}); fell back`);
  opts.log?.(`session ready on ${session.provider} in ${session.loadMs.toFixed(0)} ms`);
  const summary = summarize(ck, tokenizer);
  const info: ModelInfo = {
    path: ck.dir,
    name: ck.name,
    type: ck.spec.modelType,
    architecture: ck.spec.architecture,
    layers: ck.spec.numLayers,
    heads: ck.spec.numHeads,
    head_dim: ck.spec.headDim,
    terms: summary.terms,
    execution_provider: session.provider,
    checkpoint_hash: ck.hash,
  };
  const t2 = performance.now();
  const timings = { build_ms: t1 - t0, session_ms: t2 - t1, total_ms: t2 - t0, graph_cached: !graph.built };
  return new OpenModel(info, summary, ck, tokenizer, session, timings, graph, threads, graphCache, opts);
}
