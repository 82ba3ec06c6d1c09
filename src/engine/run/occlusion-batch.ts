// The variants of an occlusion and how they run: each one the input with one token masked or removed, run as
// batches of the occlusion graph (graph/occlusion-graph.ts, a process of its own) sized by working memory, or one
// plain forward pass each. Both return only the followed rows of each variant's last hidden state.
import type { OcclusionMethod } from '../api';
import { LensError } from '../errors';
import { FORWARD_HEAD_GROUP } from '../graph/deberta-graph';
import { InputName, LAST_HIDDEN } from '../graph/deberta-io';
import { graphInputs, relativeInputs } from '../graph/graph-inputs';
import { OCCLUSION_ROWS, OcclusionInput } from '../graph/occlusion-graph';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RuntimeSession } from '../runtime/session';
import type { ModelSpec } from '../types';
import { int64Feeds } from './input';
import { lazyGraph } from './lazy-graph';
import type { RunBase } from './run-base';

/** One variant: the input with the tokens at `positions` (one token, or a word's pieces) masked or removed; `rows`
 *  are the followed rows in it. */
export interface Variant {
  method: OcclusionMethod;
  positions: number[];
  rows: number[];
}
/** The ids (and token types) of a variant of `ids`. */
export function variantInput(v: Variant, ids: number[], types: number[] | undefined, maskId: number | undefined) {
  if (v.method === 'mask') {
    const out = ids.slice();
    for (const p of v.positions) out[p] = maskId!;
    return { ids: out, types };
  }
  const gone = new Set(v.positions);
  const drop = <T>(xs: T[]) => xs.filter((_, i) => !gone.has(i));
  return { ids: drop(ids), types: types && drop(types) };
}

/** The length of a variant of n tokens. */
export const variantLength = (v: Variant, n: number): number => (v.method === 'mask' ? n : n - v.positions.length);

/** Working memory one batched run may use; the largest array of one run; the most variants a run takes. */
export const OCCLUSION_BATCH_BYTES = 512 * 2 ** 20;
export const OCCLUSION_ARRAY_BYTES = 24 * 2 ** 20;
export const MAX_OCCLUSION_BATCH = 32;

/**
 * How many variants of n tokens one batched run takes: their attention, feed-forward and state arrays fit the working
 * memory, and no single array passes OCCLUSION_ARRAY_BYTES. The runtime allocates without an arena (runtime/worker.ts),
 * and the C allocator maps arrays past 32 MB afresh on every run: a batch whose feed-forward array [V·n, I] passed that
 * spent more time faulting pages in than it saved (v3-base, 128 tokens, 26 variants: slower than one by one).
 */
export function variantsPerRun(spec: ModelSpec, n: number, headGroup = FORWARD_HEAD_GROUP, budget = OCCLUSION_BATCH_BYTES): number {
  const perVariant = 4 * (6 * headGroup * n * 2 * n + 3 * n * spec.intermediateSize + 10 * n * spec.hiddenSize);
  const largest = 4 * n * Math.max(spec.intermediateSize, headGroup * 2 * n, spec.hiddenSize);
  const fit = Math.min(Math.floor(budget / perVariant), Math.floor(OCCLUSION_ARRAY_BYTES / largest));
  return Math.max(1, Math.min(MAX_OCCLUSION_BATCH, fit));
}

/** `total` variants in runs of at most `most`, as even as can be (128 by 28: 26, 26, 26, 25, 25 — not 4 × 28 and 16). */
export function batchSizes(total: number, most: number): number[] {
  const runs = Math.ceil(total / most);
  const base = Math.floor(total / Math.max(runs, 1));
  return Array.from({ length: runs }, (_, k) => base + (k < total % runs ? 1 : 0));
}

/** The occlusion graph's runtime process (it holds every layer's weights): started on first use, stopped after the run. */
export class OcclusionSessions extends GraphSessions<'occlusion'> {
  constructor(private readonly model: RunBase) {
    super();
  }

  start(): Promise<RuntimeSession> {
    // Heads in the forward graph's groups (EngineOptions.attentionHeadGroup): a cache variant of its own.
    const headGroup = this.model.graphCache.options.headGroup;
    const graph = () => lazyGraph(this.model, { graph: 'occlusion', headGroup });
    // The encoder's process is idle while the variants run: the same threads.
    return this.session('occlusion', 'tail', graph, this.model.executionProvider, this.model.threads);
  }
}

/** The input of one run of the variants: their ids, as a [V, n] tensor (n the same for all). */
interface Batch {
  ids: number[];
  types: number[] | undefined;
  maskId: number | undefined;
}

function checkFinite(model: RunBase, data: Float32Array, what: string): Float32Array {
  if (!data.every(Number.isFinite)) throw new LensError(`${model.checkpoint.dir}: ${what} gave non-finite states`, 'runtime');
  return data;
}

/** One batched run of `part` (all of one method): each variant's followed rows, [part.length · rows, D]. */
export async function runBatch(
  model: RunBase,
  session: RuntimeSession,
  part: Variant[],
  input: Batch,
  signal?: AbortSignal,
): Promise<{ ms: number; data: Float32Array }> {
  const spec = model.checkpoint.spec;
  const inputs = part.map((v) => variantInput(v, input.ids, input.types, input.maskId));
  const n = inputs[0]!.ids.length;
  const V = part.length;
  const stacked = (xs: (k: number) => ArrayLike<number>) => {
    const out = new BigInt64Array(V * n);
    for (let k = 0; k < V; k++) {
      const x = xs(k);
      for (let i = 0; i < n; i++) out[k * n + i] = BigInt(x[i]!);
    }
    return { type: 'int64' as const, data: out, dims: [V, n] };
  };
  const feeds: Record<string, FeedTensor> = { [InputName.ids]: stacked((k) => inputs[k]!.ids) };
  if (spec.positionBiasedInput) feeds[InputName.positions] = stacked(() => Array.from({ length: n }, (_, i) => i));
  if (spec.typeVocabSize > 0) feeds[InputName.tokenTypes] = stacked((k) => inputs[k]!.types ?? new Array<number>(n).fill(0));
  Object.assign(feeds, int64Feeds(relativeInputs(spec, n, true)));
  const rows = part.flatMap((v, k) => v.rows.map((r) => k * n + r));
  feeds[OcclusionInput.rows] = { type: 'int64', data: BigInt64Array.from(rows, BigInt), dims: [rows.length] };
  const run = await session.run('tail', feeds, [OCCLUSION_ROWS], signal);
  try {
    return { ms: run.ms, data: checkFinite(model, run.outputs.read(OCCLUSION_ROWS), 'a batch of occlusion variants') };
  } finally {
    run.outputs.release();
  }
}

/** One variant through the plain forward graph (the encoder's process): its followed rows, [rows, D]. */
export async function runOne(model: RunBase, v: Variant, input: Batch, signal?: AbortSignal): Promise<{ ms: number; data: Float32Array }> {
  const spec = model.checkpoint.spec,
    D = spec.hiddenSize;
  const { ids, types } = variantInput(v, input.ids, input.types, input.maskId);
  const run = await model.session.run('forward', int64Feeds(graphInputs(spec, ids, types)), [LAST_HIDDEN], signal);
  try {
    const last = checkFinite(model, run.outputs.read(LAST_HIDDEN), `the variant without token ${v.positions.join(', ')}`);
    const out = new Float32Array(v.rows.length * D);
    v.rows.forEach((r, k) => out.set(last.subarray(r * D, (r + 1) * D), k * D));
    return { ms: run.ms, data: out };
  } finally {
    run.outputs.release();
  }
}
