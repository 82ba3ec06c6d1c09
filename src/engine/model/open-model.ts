// The concrete model: loads a checkpoint, builds (or reuses) its graphs, starts its runtime process, and hands
// itself as the RunContext to the verbs in run/ (which never import it).
import * as path from 'node:path';
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
import { findHeads, headNames } from '../checkpoint/heads';
import { emdPlan, type EmdPlan } from '../checkpoint/emd';
import { LensError } from '../errors';
import { type CachedGraph, ensureGraph } from '../graph/graph-cache';
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
import { ThreadedTokenizer } from '../tokenizer-thread/threaded-tokenizer';
import type { TokenizerHandle } from '../tokenizer/types';
import type { ExecutionProviderSetting, ModelInfo } from '../types';
import { bundledName, DEFAULT_MODEL, resolveModelDir } from './model-dir';

export { DEFAULT_MODEL, resolveModelDir } from './model-dir';
/** Inputs longer than this are refused unless maxTokens says otherwise; longer ones are also checked against free memory. */
export const DEFAULT_MAX_TOKENS = 4096;

const HEAD_PREFIXES = ['lm_predictions.', 'cls.', 'classifier.', 'pooler.', 'qa_outputs.', 'lm_head.', 'mask_predictions.'];

/** Parameters of the encoder (task heads and buffers excluded). */
export function encoderParameters(ck: Checkpoint): number {
  let total = 0;
  for (const [name, t] of ck.weights) {
    if (HEAD_PREFIXES.some((p) => name.startsWith(p)) || name.endsWith('position_ids')) continue;
    if (name === 'embeddings.position_embeddings.weight' && !ck.spec.positionBiasedInput) continue;
    total += t.shape.reduce((a, b) => a * b, 1);
  }
  return total;
}

function summarize(ck: Checkpoint, tokenizer: Pick<TokenizerHandle, 'kind'> | undefined): ModelSummary {
  const s = ck.spec;
  // One walk up the folders for both fields (each bundled model is looked for beside the bundle or the sources).
  const bundled = bundledName(ck.dir);
  const heads = findHeads(ck);
  return {
    path: ck.dir,
    name: ck.name,
    type: s.modelType,
    architecture: s.architecture,
    layers: s.numLayers,
    heads: s.numHeads,
    head_dim: s.headDim,
    hidden_size: s.hiddenSize,
    intermediate_size: s.intermediateSize,
    vocab_size: s.vocabSize,
    parameters: encoderParameters(ck),
    // BERT has no per-layer terms: its scores are one q·k product (layer 0 splits into four by the embeddings).
    terms: s.architecture === 'bert' ? [] : ['c2c', ...s.posAttType.slice().sort()],
    position_buckets: s.positionBuckets,
    max_relative_positions: s.maxRelativePositions,
    tokenizer: tokenizer?.kind ?? 'none',
    weights: ck.weightFiles.map((f) => path.basename(f)),
    is_default: bundled === DEFAULT_MODEL,
    bundled,
    prediction_heads: headNames(heads),
    task_head: heads.task?.kind ?? null,
    ...emdSummary(emdPlan(ck, heads)),
  };
}

function emdSummary(plan: EmdPlan): Pick<ModelSummary, 'emd' | 'emd_rows'> {
  return plan.kind === 'passes' ? { emd: 'passes', emd_rows: plan.rows } : { emd: plan.kind };
}

/** The folder's tokenizer, loaded in its own thread, with its special ids checked against the model. */
async function tryTokenizer(dir: string, ck: Checkpoint): Promise<TokenizerHandle | undefined> {
  let tok: TokenizerHandle;
  try {
    tok = await ThreadedTokenizer.open(dir);
  } catch (e) {
    // A folder without tokenizer files still explains `--ids`; text input reports the missing tokenizer then.
    if (e instanceof LensError && e.code === 'not-found') return undefined;
    throw e;
  }
  for (const [role, id] of Object.entries(tok.special)) {
    if (id >= ck.spec.vocabSize) {
      await tok.dispose();
      throw new LensError(
        `${dir}: the tokenizer's ${role} token has id ${id}, outside the model's vocabulary of ${ck.spec.vocabSize} (config.json vocab_size); ` +
          `the tokenizer files do not belong to this model.`,
        'corrupt',
      );
    }
  }
  return tok;
}

/** Reads config, weights index and tokenizer: what Select Model and `deberta-lens info` need, no graph build. */
export async function inspectModel(dirArg: string): Promise<ModelSummary> {
  const dir = resolveModelDir(dirArg);
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

/** Loads a checkpoint, builds (or reuses) its ONNX graphs and starts a runtime session in a child process. */
export async function openModel(dirArg: string, opts: EngineOptions = {}): Promise<OpenModel> {
  const t0 = performance.now();
  const dir = resolveModelDir(dirArg);
  // Every graph of this model (the encoder's, the heads', the reruns') is cached with these settings.
  const graphCache: GraphCacheSettings = {
    dir: opts.cacheDir ?? defaultCacheDir(),
    options: { maxGB: opts.cacheMaxGB ?? DEFAULT_CACHE_MAX_GB, log: opts.log, headGroup: opts.attentionHeadGroup },
  };
  const ck = await loadCheckpoint(dir, { hashStore: hashStoreOf(graphCache.dir) });
  const tokenizer = await tryTokenizer(ck.dir, ck);
  let graph: CachedGraph;
  try {
    graph = ensureGraph(ck, graphCache.dir, graphCache.options);
  } catch (e) {
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
