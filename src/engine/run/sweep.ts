// Which heads matter at one position: each head's term removed alone (one intervention per cell), heads ranked by
// how much the followed token's log-probability drops. Every rerun starts at the head's own layer, from that layer's
// input state as one plain forward pass left it.
import type { AblationMode, SweepCell, SweepInput, SweepProgress, SweepResult, TokenRating } from '../api';
import { at, first } from '../../shared/checked';
import { LensError } from '../errors';
import { LayerInput, LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from '../graph/deberta-io';
import { ensureGraphOf } from '../graph/graph-cache';
import { graphInputs, relativeInputs } from '../graph/graph-inputs';
import { HeadOutput } from '../graph/head-graph';
import { buildSweepGraph, SWEEP_GRAPH_VERSION, SWEEP_ROWS, SweepInput as SweepFeed, sweepGraphFits } from '../graph/sweep-graph';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RuntimeSession } from '../runtime/session';
import type { TermName } from '../types';
import { type AblationPlan, modelTerms } from './ablation-spec';
import { checkLength, int64Feeds, prepareInput } from './input';
import { nameTokens, positionsToPredict, readPrediction, readPredictions, requireMlmHead } from './prediction-read';
import type { RunBase, RunContext } from './run-context';

/** The terms a sweep covers: "all" or a list, each one the model has. */
export function sweepTerms(asked: readonly string[], modelHas: TermName[], flag = '--sweep'): TermName[] {
  const want = asked.includes('all') ? modelHas : asked;
  if (want.length === 0) throw new LensError(`${flag} is empty: give c2p, p2c, c2c or all`);
  const out: TermName[] = [];
  for (const t of want) {
    if (t !== 'c2c' && t !== 'c2p' && t !== 'p2c') throw new LensError(`${flag} term "${t}" is not c2c, c2p, p2c or all`);
    if (!modelHas.includes(t)) throw new LensError(`${flag} ${t}: this model has no ${t} term (its terms: ${modelHas.join(', ')})`);
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/** Working memory one batched rerun may use (the variants of a layer run in chunks that fit). */
const SWEEP_CHUNK_BYTES = 512 * 2 ** 20;

/**
 * The batched sweep graphs' runtime sessions for one sweep (see graph/sweep-graph.ts), one per start layer, each
 * stopped before the next starts (it holds that layer's weights and all later ones').
 */
class SweepSessions extends GraphSessions<number> {
  constructor(private readonly model: RunBase) {
    super();
  }

  start(layer: number): Promise<RuntimeSession> {
    const { checkpoint: ck, graphCache } = this.model;
    const kind = {
      version: SWEEP_GRAPH_VERSION,
      variant: `\nfrom/${layer}`,
      what: `sweep graph of layers ${layer}…${ck.spec.numLayers - 1}`,
      build: () => buildSweepGraph(ck, layer),
    };
    const graph = () => ensureGraphOf(ck, graphCache.dir, kind, graphCache.options);
    return this.session(layer, 'tail', graph, this.model.executionProvider, this.model.threads);
  }
}

/** `p`, or a rejection the moment `signal` aborts (starting a rerun process is not itself cancellable). */
function unlessAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  p.catch(() => undefined); // a start that fails after the abort is nobody's error
  const cancelled = () => new LensError('cancelled', 'cancelled');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** How many variants one batched run takes at n tokens (attention, feed-forward and state arrays of each). */
function variantsPerRun(model: RunContext, n: number): number {
  const s = model.checkpoint.spec;
  const perVariant = 4 * (6 * s.numHeads * n * 2 * n + 3 * n * s.intermediateSize + 10 * n * s.hiddenSize);
  return Math.max(1, Math.floor(SWEEP_CHUNK_BYTES / perVariant));
}

/** The one position a sweep follows: the asked one, else the input's first [MASK]. */
function chooseSweepPosition(model: RunContext, ids: number[], asked: number | undefined) {
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, asked === undefined ? undefined : [asked]);
  if (asked === undefined) {
    if (inputMasks.length === 0) {
      throw new LensError(
        'nothing to rank heads on: the input has no [MASK] token and no position was given; write [MASK] where a word should be predicted, or name a position (--position 3)',
      );
    }
    return { position: first(inputMasks, 'the [MASK]s of the input'), runIds: ids, original: undefined };
  }
  if (toMask.length === 0) return { position: asked, runIds: ids, original: undefined };
  const runIds = ids.slice();
  runIds[asked] = maskId!;
  return { position: asked, runIds, original: ids[asked] };
}

/** One batched rerun of layers l… for `part` (each variant removes one head's term in layer l): the followed
 *  position's last hidden state of each, [variants, D]. */
async function runVariants(
  model: RunContext,
  session: RuntimeSession,
  part: { term: TermName; h: number }[],
  hidden: Float32Array,
  rel: Float32Array,
  relRows: number,
  n: number,
  position: number,
  mode: AblationMode,
  signal?: AbortSignal,
) {
  const spec = model.checkpoint.spec,
    H = spec.numHeads,
    D = spec.hiddenSize;
  const feeds: Record<string, FeedTensor> = {
    [LayerInput.hidden]: { type: 'float32', data: hidden, dims: [n, D] },
    [LayerInput.rel]: { type: 'float32', data: rel, dims: [relRows, D] },
    [SweepFeed.mean]: { type: 'float32', data: Float32Array.of(mode === 'mean' ? 1 : 0), dims: [1] },
    [SweepFeed.position]: { type: 'int64', data: BigInt64Array.of(BigInt(position)), dims: [1] },
  };
  Object.assign(feeds, int64Feeds(relativeInputs(spec, n)));
  for (const t of modelTerms(spec)) {
    const keep = new Float32Array(part.length * H).fill(1);
    part.forEach(({ term, h }, k) => {
      if (term === t) keep[k * H + h] = 0;
    });
    feeds[SweepFeed.keep(t)] = { type: 'float32', data: keep, dims: [part.length, H] };
  }
  const run = await session.run('tail', feeds, [SWEEP_ROWS], signal);
  try {
    return { ms: run.ms, data: run.outputs.read(SWEEP_ROWS) };
  } finally {
    run.outputs.release();
  }
}

export async function sweepWith(model: RunContext, input: SweepInput, signal?: AbortSignal): Promise<SweepResult> {
  const t0 = performance.now();
  const ck = model.checkpoint,
    spec = ck.spec;
  const terms = sweepTerms(input.terms, modelTerms(spec));
  const mode: AblationMode = input.mode ?? 'zero';
  requireMlmHead(ck);
  const { ids, tokens } = await prepareInput(model, { text: input.text, ids: input.ids }, signal);
  const n = ids.length;
  const { position, runIds, original } = chooseSweepPosition(model, ids, input.position);
  checkLength(model, n);
  const L = spec.numLayers,
    H = spec.numHeads;
  const relative = spec.relativeAttention && spec.posAttType.length > 0;

  // One forward pass keeps every layer's input state: each cell's rerun starts from its layer's.
  const fetches = [...Array.from({ length: L }, (_, l) => layerInputOutput(l)), LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])];
  const fwd = await model.session.run('forward', int64Feeds(graphInputs(spec, runIds)), fetches, signal);
  let states: Float32Array[],
    last: Float32Array,
    rel: Float32Array | undefined,
    relRows = 0;
  try {
    states = Array.from({ length: L }, (_, l) => fwd.outputs.read(layerInputOutput(l)));
    last = fwd.outputs.read(LAST_HIDDEN);
    if (relative) [rel, relRows] = [fwd.outputs.read(REL_OUTPUT), first(fwd.outputs.dims(REL_OUTPUT), 'the shape of the relative rows')];
  } finally {
    fwd.outputs.release();
  }
  let rerunMs = 0,
    headMs = 0;

  /** The followed token's logit, log-probability and rank, and the first choice, on a last hidden state. */
  const rate = async (hidden: Float32Array, target: number) => {
    const out = await model.heads.run(hidden, n, [position], [target], 1, false, signal);
    headMs += out.ms;
    const row = readPrediction(out.read, position, 1);
    const lse = first(out.read(HeadOutput.logSumExp), 'the log-sum-exp row');
    const top: TokenRating = { logit: row.first.logit, logprob: row.first.logit - lse, rank: 1 };
    return { rating: { logit: row.target.logit, logprob: row.target.logit - lse, rank: row.target.rank }, top1: row.first.id, top };
  };
  // Before: at an input [MASK] the followed token is the first choice, else the original token.
  const plain = await rate(last, original ?? 0);
  const target = original ?? plain.top1;
  const before = original === undefined ? plain.top : plain.rating;

  const total = L * H * terms.length;
  let done = 0;
  const report = (layer: number) => input.onProgress?.({ done, total, layer } satisfies SweepProgress);
  report(0);
  const cells: SweepCell[] = [];
  const record = (l: number, h: number, term: TermName, after: { rating: TokenRating; top1: number }) => {
    cells.push({
      layer: l,
      head: h,
      term,
      logprob_after: after.rating.logprob,
      rank_after: after.rating.rank,
      drop: before.logprob - after.rating.logprob,
      top1_after: { id: after.top1, token: `#${after.top1}` },
    });
    done++;
    report(l);
  };
  const batched = input.batch !== false && sweepGraphFits(ck, 0);
  const sessions = batched ? new SweepSessions(model) : undefined;
  try {
    for (const [l, state] of states.entries()) {
      try {
        if (sessions) {
          // Every (term, head) of this layer as a batch of variants, in chunks that fit the working memory.
          const variants = terms.flatMap((term) => Array.from({ length: H }, (_, h) => ({ term, h })));
          const chunk = variantsPerRun(model, n);
          for (let v0 = 0; v0 < variants.length; v0 += chunk) {
            const part = variants.slice(v0, v0 + chunk);
            const rows = await runVariants(
              model,
              await unlessAborted(sessions.start(l), signal),
              part,
              state,
              rel!,
              relRows,
              n,
              position,
              mode,
              signal,
            );
            rerunMs += rows.ms;
            if (!rows.data.every(Number.isFinite))
              throw new LensError(`${ck.dir}: the reruns of layer ${l} gave non-finite states`, 'runtime');
            const out = await model.heads.run(
              rows.data,
              part.length,
              part.map((_, k) => k),
              part.map(() => target),
              1,
              false,
              signal,
            );
            headMs += out.ms;
            const ranked = readPredictions(
              out.read,
              part.map((_, k) => k),
              1,
            );
            const lse = out.read(HeadOutput.logSumExp);
            part.forEach(({ term, h }, k) => {
              const row = at(ranked, k, 'variant');
              record(l, h, term, {
                rating: { logit: row.target.logit, logprob: row.target.logit - at(lse, k, 'variant'), rank: row.target.rank },
                top1: row.first.id,
              });
            });
          }
        } else {
          for (const term of terms) {
            for (let h = 0; h < H; h++) {
              const plan: AblationPlan = { mode, layers: new Map([[l, { [term]: [h] }]]), firstLayer: l, entries: [`${l}.${h}:${term}`] };
              const tail = await unlessAborted(model.tails.run(plan, state, rel, relRows, n, signal), signal);
              rerunMs += tail.ms;
              if (!tail.hidden.every(Number.isFinite))
                throw new LensError(`${ck.dir}: the rerun without ${l}.${h}:${term} gave non-finite states`, 'runtime');
              record(l, h, term, await rate(tail.hidden, target));
            }
          }
        }
      } finally {
        // Each start layer's rerun process holds that layer's weights and all later ones': one at a time.
        await (sessions ? sessions.idle(l) : model.tails.idle(l));
      }
    }
  } finally {
    await sessions?.dispose();
  }
  const followed = { id: target, token: `#${target}` };
  await nameTokens(model, [followed, ...cells.map((c) => c.top1_after)], signal);
  const grid = Object.fromEntries(
    terms.map((t) => [
      t,
      Array.from({ length: L }, (_, l) =>
        Array.from({ length: H }, (_, h) => cells.find((c) => c.term === t && c.layer === l && c.head === h)!.drop),
      ),
    ]),
  ) as SweepResult['grid'];
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    mode,
    terms,
    position,
    source: original === undefined ? 'input' : 'masked',
    input_ids: ids,
    tokens,
    followed: { ...followed, which: original === undefined ? 'top1_before' : 'original', before },
    grid,
    ranking: [...cells].sort((a, b) => b.drop - a.drop),
    timings: { forward_ms: fwd.ms, rerun_ms: rerunMs, head_ms: headMs, cells: total, total_ms: performance.now() - t0 },
  };
}
