// The prediction heads of one open model as runtime sessions: the plain graph (fill-mask, RTD) in the encoder's own
// process, the compare graph (also KL against a reference state) in a process of its own. Below the verbs.
import { findHeads, type Heads } from '../checkpoint/heads';
import { LAST_HIDDEN, layerInputOutput, LayerInput, REL_OUTPUT } from '../graph/deberta-io';
import { EmdOutput } from '../graph/emd-graph';
import { TailInput } from '../graph/deberta-io';
import type { TermName } from '../types';
import type { CachedModelGraph } from '../graph/graph-cache';
import type { GraphRecipe } from '../graph/graph-recipes';
import { graphInputs, relativeInputs } from '../graph/graph-inputs';
import { HeadInput, HeadOutput } from '../graph/head-graph';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RunOutput, RuntimeSession } from '../runtime/session';
import { checkLength, forwardOnly, int64Feeds } from './input';
import { lazyGraph } from './lazy-graph';
import type { RunBase } from './run-base';

/**
 * The head graphs for one open model, each started on first use, not with the model: the plain graph for
 * predictions runs in the encoder's own runtime process (no second process to hand the hidden state to), the
 * compare graph (also KL against a reference state) for interventions in a process of its own.
 */
export class HeadSession extends GraphSessions<'compare'> {
  readonly heads: Heads;
  /** The plain and EMD graphs' cache entries, held while the encoder's process may serve them. */
  private plainGraph?: CachedModelGraph;
  private plainAdded?: Promise<void>;
  private readonly emdGraphs = new Map<EmdVariant, CachedModelGraph>();
  private readonly emdAdded = new Map<EmdVariant, Promise<void>>();

  constructor(private readonly model: RunBase) {
    super();
    this.heads = findHeads(model.checkpoint);
  }

  private graphOf(variant: 'plain' | 'compare' | EmdVariant): () => Promise<CachedModelGraph> {
    // The EMD head graph computes attention in the forward graph's head groups (EngineOptions.attentionHeadGroup).
    const headGroup = variant === 'emd' ? this.model.graphCache.options.headGroup : undefined;
    const recipe: GraphRecipe =
      variant === 'emd-passes' || variant === 'emd-edit'
        ? { graph: variant }
        : { graph: 'head', variant, ...(headGroup !== undefined ? { headGroup } : {}) };
    return () => lazyGraph(this.model, recipe);
  }

  /** An EMD graph, added to the encoder's process on first use (the forward hands it its states there). */
  private async startEmd(variant: EmdVariant): Promise<RuntimeSession> {
    let added = this.emdAdded.get(variant);
    if (!added) {
      added = (async () => {
        let graph = this.emdGraphs.get(variant);
        if (!graph) this.emdGraphs.set(variant, (graph = await this.graphOf(variant)()));
        await this.model.session.addGraph(variant, graph.modelPath);
      })().finally(() => this.emdAdded.delete(variant));
      this.emdAdded.set(variant, added);
    }
    await added;
    return this.model.session;
  }

  async start(variant: 'plain' | 'compare' = 'plain'): Promise<RuntimeSession> {
    if (variant === 'plain') {
      this.plainAdded ??= (async () => {
        this.plainGraph ??= await this.graphOf('plain')();
        await this.model.session.addGraph('heads', this.plainGraph.modelPath);
      })().finally(() => (this.plainAdded = undefined));
      await this.plainAdded;
      return this.model.session;
    }
    // The heads are a few matrix products: two threads are plenty, and leave the rest to the encoder's process.
    const threads = Math.min(2, this.model.threads);
    return this.session('compare', 'heads', this.graphOf('compare'), this.model.executionProvider, threads);
  }

  override async dispose(): Promise<void> {
    try {
      await super.dispose();
    } finally {
      this.plainGraph?.release();
      this.plainGraph = undefined;
      for (const graph of this.emdGraphs.values()) graph.release();
      this.emdGraphs.clear();
    }
  }

  /** The feeds and fetches of one heads run over `n` tokens (all but the hidden states). */
  private request(n: number, positions: number[], targets: number[], k: number, rtd: boolean, ref?: Float32Array) {
    const D = this.model.checkpoint.spec.hiddenSize;
    const feeds: Record<string, FeedTensor> = {};
    if (ref) feeds[HeadInput.refHidden] = { type: 'float32', data: ref, dims: [n, D] };
    const fetches: string[] = [];
    if (this.heads.mlm) {
      const int64 = (xs: number[]) => BigInt64Array.from(xs, BigInt);
      // No rows at all crashes onnxruntime's CPU kernels (SIGFPE on an empty Gemm/TopK): ask for row 0, unread.
      const rows = positions.length > 0 ? positions : [0];
      const rowTargets = positions.length > 0 ? targets : [0];
      feeds[HeadInput.positions] = { type: 'int64', data: int64(rows), dims: [rows.length] };
      feeds[HeadInput.targets] = { type: 'int64', data: int64(rowTargets), dims: [rowTargets.length] };
      feeds[HeadInput.k] = { type: 'int64', data: int64([k]), dims: [1] };
      if (positions.length > 0)
        fetches.push(HeadOutput.topLogits, HeadOutput.topIds, HeadOutput.logSumExp, HeadOutput.targetLogits, HeadOutput.targetRanks);
      if (positions.length > 0 && ref) fetches.push(HeadOutput.kl);
    }
    if (rtd && this.heads.rtd) fetches.push(HeadOutput.rtdLogits);
    return { feeds, fetches };
  }

  /**
   * One run of the heads over a hidden state `[n, D]`: top-k rows at `positions` (each with the logit and rank of
   * `targets[r]`) and, with an RTD head and `rtd`, every token's RTD logit. With `ref` (a reference state of the
   * same tokens), also KL(p_ref ‖ p) per row.
   */
  async run(
    hidden: Float32Array,
    n: number,
    positions: number[],
    targets: number[],
    k: number,
    rtd: boolean,
    signal?: AbortSignal,
    ref?: Float32Array,
  ) {
    const session = await this.start(ref ? 'compare' : 'plain');
    const { feeds, fetches } = this.request(n, positions, targets, k, rtd, ref);
    feeds[HeadInput.hidden] = { type: 'float32', data: hidden, dims: [n, this.model.checkpoint.spec.hiddenSize] };
    if (fetches.length === 0) return headOutputs(new Map(), 0);
    const run = await session.run('heads', feeds, fetches, signal);
    return headOutputs(readAll(run, fetches), run.ms);
  }

  /**
   * The encoder on `ids` and the heads on its last hidden state in one message to the encoder's process (the
   * hidden state never leaves it); as `run` otherwise, with the forward's run time as `forwardMs`.
   */
  async runAfterForward(
    ids: number[],
    tokenTypes: number[] | undefined,
    positions: number[],
    targets: number[],
    k: number,
    rtd: boolean,
    signal?: AbortSignal,
    emd = false,
  ) {
    const { feeds, fetches } = this.request(ids.length, positions, targets, k, rtd);
    if (emd && positions.length > 0) return this.runEmdAfterForward(ids, tokenTypes, feeds, fetches, signal);
    if (fetches.length === 0) {
      const fwd = await forwardOnly(this.model, ids, signal, tokenTypes);
      return { ...headOutputs(new Map(), 0), forwardMs: fwd.ms };
    }
    checkLength(this.model, ids.length);
    const session = await this.start('plain');
    const then = { graph: 'heads' as const, feeds, fetches, from: { [HeadInput.hidden]: LAST_HIDDEN } };
    const run = await session.run(
      'forward',
      int64Feeds(graphInputs(this.model.checkpoint.spec, ids, tokenTypes)),
      [LAST_HIDDEN],
      signal,
      undefined,
      then,
    );
    return { ...headOutputs(readAll(run, fetches), run.thenMs ?? 0), forwardMs: run.ms };
  }

  /**
   * runAfterForward through the Enhanced Mask Decoder (the masked-LM rows only; the caller has checked the checkpoint
   * with emdPlan): the forward hands the EMD head graph the state entering the last layer and its relative rows.
   */
  private async runEmdAfterForward(
    ids: number[],
    tokenTypes: number[] | undefined,
    feeds: Record<string, FeedTensor>,
    fetches: string[],
    signal?: AbortSignal,
  ) {
    const mlmFetches = fetches.filter((f) => f !== HeadOutput.rtdLogits);
    const run = await this.afterForward('emd', HeadInput.hidden, ids, tokenTypes, feeds, mlmFetches, signal);
    return { ...headOutputs(readAll(run, mlmFetches), run.thenMs ?? 0), forwardMs: run.ms };
  }

  /**
   * The encoder on `ids`, then the EMD passes graph on the state entering its last layer, in one message to the
   * encoder's process: every output of the passes (EmdOutput names) read, and the forward's and the passes' times.
   */
  async runEmdPasses(ids: number[], tokenTypes: number[] | undefined, fetches: string[], signal?: AbortSignal) {
    const run = await this.afterForward('emd-passes', LayerInput.hidden, ids, tokenTypes, {}, fetches, signal);
    return { outputs: readAll(run, fetches), forwardMs: run.ms, passesMs: run.thenMs ?? 0 };
  }

  /**
   * The encoder on `ids`, then the EMD's passes with the terms `keep` removes (per term `[2 · heads]`, pass-major; 1
   * keeps) on the state entering the last layer: the second pass's state `[n, D]`, what the LM head reads.
   */
  async runEmdEdit(ids: number[], keep: Partial<Record<TermName, Float32Array>>, mean: boolean, signal?: AbortSignal) {
    const H = this.model.checkpoint.spec.numHeads;
    const feeds: Record<string, FeedTensor> = { [TailInput.mean]: { type: 'float32', data: Float32Array.of(mean ? 1 : 0), dims: [1] } };
    for (const [t, data] of Object.entries(keep)) feeds[TailInput.keep(t as TermName)] = { type: 'float32', data, dims: [2, H] };
    const out = EmdOutput.hidden(1);
    const run = await this.afterForward('emd-edit', LayerInput.hidden, ids, undefined, feeds, [out], signal);
    return { hidden: readAll(run, [out]).get(out)!, forwardMs: run.ms, passesMs: run.thenMs ?? 0 };
  }

  /** The forward, then an EMD graph fed the state entering the last layer (as `hiddenName`) and the relative rows. */
  private async afterForward(
    graph: EmdVariant,
    hiddenName: string,
    ids: number[],
    tokenTypes: number[] | undefined,
    feeds: Record<string, FeedTensor>,
    fetches: string[],
    signal?: AbortSignal,
  ) {
    const s = this.model.checkpoint.spec;
    const n = ids.length;
    checkLength(this.model, n);
    const session = await this.startEmd(graph);
    const relative = relativeInputs(s, n);
    const withRel = Object.keys(relative).length > 0;
    const H = layerInputOutput(s.numLayers - 1);
    const from: Record<string, string> = { [hiddenName]: H, ...(withRel ? { [LayerInput.rel]: REL_OUTPUT } : {}) };
    const then = { graph, feeds: { ...feeds, ...int64Feeds(relative) }, fetches, from };
    return session.run(
      'forward',
      int64Feeds(graphInputs(s, ids, tokenTypes)),
      [H, ...(withRel ? [REL_OUTPUT] : [])],
      signal,
      undefined,
      then,
    );
  }
}

type EmdVariant = 'emd' | 'emd-passes' | 'emd-edit';

/** A few numbers per row: read them all now and hand the runtime's output file straight back. */
function readAll(run: RunOutput, fetches: string[]): Map<string, Float32Array> {
  const got = new Map<string, Float32Array>();
  try {
    for (const name of fetches) got.set(name, run.outputs.read(name));
  } finally {
    run.outputs.release();
  }
  return got;
}

function headOutputs(got: Map<string, Float32Array>, ms: number) {
  return {
    ms,
    read: (name: string): Float32Array => {
      const t = got.get(name);
      if (!t) throw new RangeError(`no head output ${name} in this run`);
      return t;
    },
  };
}
