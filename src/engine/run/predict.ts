// Fill-mask and replaced-token detection: the encoder's last hidden state through the checkpoint's own heads.
import * as os from 'node:os';
import { LensError } from '../errors';
import { checkLength, forwardOnly, int64Feeds, prepareInput } from './explain';
import { LAST_HIDDEN } from '../graph/deberta-graph';
import { graphInputs } from '../graph/graph-inputs';
import { buildHeadGraph, HEAD_COMPARE_GRAPH_VERSION, HEAD_GRAPH_VERSION, HeadInput, HeadOutput } from '../graph/head-graph';
import { DEFAULT_CACHE_MAX_GB, defaultCacheDir } from '../cache/cache-layout';
import { ensureGraphOf } from '../graph/graph-cache';
import { GraphSessions } from '../runtime/graph-sessions';
import type { CachedModelGraph } from '../graph/graph-cache';
import { findHeads, type Heads, noHeadMessage } from '../checkpoint/heads';
import type { OpenModel } from '../model/open-model';
import type { PositionPrediction, PredictInput, PredictResult, RtdScore, TopToken } from '../prediction';
import type { FeedTensor } from '../runtime/messages';
import type { RunOutput, RuntimeSession } from '../runtime/session';
import type { ExplainResult } from '../result';
import type { Token } from '../types';

export const DEFAULT_TOP = 5;

/**
 * The head graphs for one open model, each started on first use, not with the model: the plain graph for
 * predictions runs in the encoder's own runtime process (no second process to hand the hidden state to), the
 * compare graph (also KL against a reference state) for interventions in a process of its own.
 */
export class HeadSession extends GraphSessions<'compare'> {
  readonly heads: Heads;
  /** The plain graph's cache entry, held while the encoder's process may serve it. */
  private plainGraph?: CachedModelGraph;
  private plainAdded?: Promise<void>;

  constructor(private readonly model: OpenModel) {
    super();
    this.heads = findHeads(model.checkpoint);
  }

  private graphOf(compare: boolean): () => CachedModelGraph {
    const { checkpoint: ck, options } = this.model;
    const heads = this.heads;
    const kind = { version: compare ? HEAD_COMPARE_GRAPH_VERSION : HEAD_GRAPH_VERSION, what: `${compare ? 'compare' : 'plain'} head graph`, build: () => buildHeadGraph(ck, heads, compare) };
    return () => ensureGraphOf(ck, options.cacheDir ?? defaultCacheDir(), kind, { maxGB: options.cacheMaxGB ?? DEFAULT_CACHE_MAX_GB, log: options.log });
  }

  async start(variant: 'plain' | 'compare' = 'plain'): Promise<RuntimeSession> {
    if (variant === 'plain') {
      this.plainAdded ??= (async () => {
        this.plainGraph ??= this.graphOf(false)();
        await this.model.session.addGraph('heads', this.plainGraph.modelPath);
      })().finally(() => (this.plainAdded = undefined));
      await this.plainAdded;
      return this.model.session;
    }
    const { options } = this.model;
    // The heads are a few matrix products: two threads are plenty, and leave the rest to the encoder's process.
    const threads = Math.min(2, options.threads ?? Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
    return this.session('compare', 'heads', this.graphOf(true), options.executionProvider, threads);
  }

  override async dispose(): Promise<void> {
    try {
      await super.dispose();
    } finally {
      this.plainGraph?.release();
      this.plainGraph = undefined;
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
      if (positions.length > 0) fetches.push(HeadOutput.topLogits, HeadOutput.topIds, HeadOutput.logSumExp, HeadOutput.targetLogits, HeadOutput.targetRanks);
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
  async run(hidden: Float32Array, n: number, positions: number[], targets: number[], k: number, rtd: boolean, signal?: AbortSignal, ref?: Float32Array) {
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
  async runAfterForward(ids: number[], tokenTypes: number[] | undefined, positions: number[], targets: number[], k: number, rtd: boolean, signal?: AbortSignal) {
    const { feeds, fetches } = this.request(ids.length, positions, targets, k, rtd);
    if (fetches.length === 0) {
      const fwd = await forwardOnly(this.model, ids, signal, tokenTypes);
      return { ...headOutputs(new Map(), 0), forwardMs: fwd.ms };
    }
    checkLength(this.model, ids.length);
    const session = await this.start('plain');
    const then = { graph: 'heads' as const, feeds, fetches, from: { [HeadInput.hidden]: LAST_HIDDEN } };
    const run = await session.run('forward', int64Feeds(graphInputs(this.model.checkpoint.spec, ids, tokenTypes)), [LAST_HIDDEN], signal, undefined, then);
    return { ...headOutputs(readAll(run, fetches), run.thenMs ?? 0), forwardMs: run.ms };
  }
}

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

const asInt32 = (f: Float32Array) => new Int32Array(f.buffer, f.byteOffset, f.length);
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** The [MASK]s of the input and the asked positions (validated) that must be masked first, one run each. */
export function positionsToPredict(model: OpenModel, ids: number[], positions: number[] | undefined) {
  const ck = model.checkpoint;
  const n = ids.length;
  const maskId = model.tokenizer?.special.mask;
  const inputMasks = maskId === undefined ? [] : ids.flatMap((id, i) => (id === maskId ? [i] : []));
  const asked = [...new Set(positions ?? [])].sort((a, b) => a - b);
  for (const p of asked) {
    if (!Number.isInteger(p) || p < 0 || p >= n) throw new LensError(`position ${p} does not exist: the input has tokens 0…${n - 1} ([CLS] is 0)`);
  }
  const toMask = asked.filter((p) => !inputMasks.includes(p));
  if (!model.heads.heads.mlm && asked.length > 0) {
    throw new LensError(`${ck.name} has only a replaced-token-detection head (mask_predictions.*): positions cannot be predicted without a masked-LM head`, 'unsupported');
  }
  if (model.heads.heads.mlm && toMask.length > 0 && maskId === undefined) {
    throw new LensError(`${ck.dir} has no tokenizer, so the [MASK] id is unknown: add the tokenizer files, or put the [MASK] id into the ids yourself`, 'not-found');
  }
  return { maskId, inputMasks, asked, toMask };
}

/** Checks a top-k count against the vocabulary. */
export function checkTop(model: OpenModel, top: number | undefined): number {
  const V = model.checkpoint.spec.vocabSize;
  const k = top ?? DEFAULT_TOP;
  if (!Number.isInteger(k) || k < 1 || k > V) throw new LensError(`top must be an integer from 1 to the vocabulary size ${V}, got ${k}`);
  return k;
}

/** The MLM rows of one head run: top k (tokens named "#id" until nameTokens) and each row's target logit and rank. */
export function readPredictions(read: (name: string) => Float32Array, positions: number[], k: number): { top: TopToken[]; target: TopToken & { rank: number } }[] {
  if (positions.length === 0) return [];
  const logits = read(HeadOutput.topLogits), topIds = asInt32(read(HeadOutput.topIds)), lse = read(HeadOutput.logSumExp);
  const targetLogits = read(HeadOutput.targetLogits), ranks = asInt32(read(HeadOutput.targetRanks));
  return positions.map((_, r) => {
    const prob = (logit: number) => Math.exp(logit - lse[r]);
    const top = Array.from({ length: k }, (_, c) => {
      const id = topIds[r * k + c], logit = logits[r * k + c];
      return { id, token: `#${id}`, logit, prob: prob(logit) };
    });
    return { top, target: { id: -1, token: '', logit: targetLogits[r], prob: prob(targetLogits[r]), rank: ranks[r] + 1 } };
  });
}

/** Names every token shown by its piece, looked up in the tokenizer's thread once. */
export async function nameTokens(model: OpenModel, shown: { id: number; token: string }[], signal?: AbortSignal): Promise<void> {
  const ids = [...new Set(shown.map((t) => t.id))];
  const names = model.tokenizer ? await model.tokenizer.pieces(ids, signal) : [];
  const named = new Map(ids.map((id, i) => [id, names[i] ?? `#${id}`]));
  for (const t of shown) t.token = named.get(t.id)!;
}

export async function predictWith(model: OpenModel, input: PredictInput, signal?: AbortSignal): Promise<PredictResult> {
  const t0 = performance.now();
  const heads = model.heads.heads;
  const ck = model.checkpoint;
  if (!heads.mlm && !heads.rtd) throw new LensError(noHeadMessage(ck), 'unsupported');
  const prepared = await prepareInput(model, { text: input.text, ids: input.ids }, signal);
  const { maskId, inputMasks, asked } = positionsToPredict(model, prepared.ids, input.positions);
  if (!heads.rtd && inputMasks.length === 0 && asked.length === 0) {
    const why = maskId === undefined ? `${ck.dir} has no tokenizer, so [MASK] ids are unknown` : 'the input has no [MASK] token';
    throw new LensError(`nothing to predict: ${why} and no positions were given; write [MASK] where a word should be predicted, or name positions to mask (--positions 3,7)`);
  }
  return predictPrepared(model, prepared, input, undefined, t0, signal);
}

/**
 * Fill-mask on the tokens of an explain result of this model: the [MASK]s and the RTD scores read the last hidden
 * state the explain kept (the heads only, no encoder run); each asked position is masked and run once more.
 */
export async function predictExplained(model: OpenModel, result: ExplainResult, input: Pick<PredictInput, 'positions' | 'top'>, signal?: AbortSignal): Promise<PredictResult> {
  const t0 = performance.now();
  const heads = model.heads.heads;
  if (!heads.mlm && !heads.rtd) throw new LensError(noHeadMessage(model.checkpoint), 'unsupported');
  if (result.model.checkpoint_hash !== model.info.checkpoint_hash) throw new LensError(`this result was explained with ${result.model.name}, not ${model.info.name}: explain again`, 'invalid-input');
  if (result.released) throw new LensError('this result was released; explain again', 'runtime');
  const prepared = { ids: result.inputIds, tokens: result.tokens, tokenTypes: result.tokenTypeIds };
  return predictPrepared(model, prepared, input, result.lastHidden, t0, signal);
}

/** The head runs on prepared tokens; `hidden`, when given, is the last hidden state of those tokens as they are. */
async function predictPrepared(
  model: OpenModel,
  prepared: { ids: number[]; tokens: Token[]; tokenTypes?: number[] },
  input: Pick<PredictInput, 'positions' | 'top'>,
  hidden: Float32Array | undefined,
  t0: number,
  signal?: AbortSignal,
): Promise<PredictResult> {
  const heads = model.heads.heads;
  const { ids, tokens, tokenTypes } = prepared;
  const n = ids.length;
  const k = checkTop(model, input.top);
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, input.positions);
  const t1 = performance.now();
  let forwardMs = 0, headMs = 0;

  // Without a kept state, the encoder and the heads run in one message to the encoder's process.
  const runOnce = async (runIds: number[], positions: number[], targets: number[], rtd: boolean, kept?: Float32Array) => {
    if (kept) {
      const out = await model.heads.run(kept, n, positions, targets, k, rtd, signal);
      headMs += out.ms;
      return out;
    }
    const out = await model.heads.runAfterForward(runIds, tokenTypes, positions, targets, k, rtd, signal);
    forwardMs += out.forwardMs;
    headMs += out.ms;
    return out;
  };

  const predictions: PositionPrediction[] = [];
  let rtd: RtdScore[] | undefined;
  const mlmMasks = heads.mlm ? inputMasks : [];
  if (mlmMasks.length > 0 || heads.rtd) {
    const first = await runOnce(ids, mlmMasks, mlmMasks.map((p) => ids[p]), true, hidden);
    readPredictions(first.read, mlmMasks, k).forEach(({ top }, r) => predictions.push({ position: mlmMasks[r], source: 'input', top }));
    if (heads.rtd) {
      const logits = first.read(HeadOutput.rtdLogits);
      rtd = Array.from(logits, (logit, i) => ({ position: i, token: tokens[i].text, logit, prob: sigmoid(logit) }));
    }
  }
  for (const p of toMask) {
    const masked = ids.slice();
    masked[p] = maskId!;
    const out = await runOnce(masked, [p], [ids[p]], false);
    const [{ top, target }] = readPredictions(out.read, [p], k);
    predictions.push({ position: p, source: 'masked', top, original: { ...target, id: ids[p], token: `#${ids[p]}` } });
  }
  predictions.sort((a, b) => a.position - b.position);
  await nameTokens(model, predictions.flatMap((p) => [...p.top, ...(p.original ? [p.original] : [])]), signal);
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    mlm_head: heads.mlm?.layout ?? null,
    rtd_head: heads.rtd !== undefined,
    mask_id: maskId ?? null,
    input_ids: ids,
    tokens,
    predictions,
    ...(rtd ? { rtd } : {}),
    timings: { tokenize_ms: t1 - t0, forward_ms: forwardMs, head_ms: headMs, total_ms: performance.now() - t0, forward_reused: hidden !== undefined && (mlmMasks.length > 0 || !!heads.rtd) },
  };
}
