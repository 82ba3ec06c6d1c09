// Which heads matter to one decision: each head's term removed alone (one intervention per cell), heads ranked by
// how much the followed value drops — a masked token's log-probability, or a task head's target logit
// (./sweep-target.ts). Every rerun starts at the head's own layer, from that layer's input state as one plain forward
// pass left it, and returns only the rows of the last hidden state that the followed value reads.
import { unlessAborted } from './abortable';
import type { AblationMode, SweepCell, SweepInput, SweepProgress, SweepResult, SweepTargetInfo, TokenRating } from '../api';
import { at, first } from '../../shared/checked';
import { LensError } from '../errors';
import { LayerInput, LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from '../graph/deberta-io';
import { graphInputs, relativeInputs } from '../graph/graph-inputs';
import { HeadOutput } from '../graph/head-graph';
import { SWEEP_ROWS, SweepInput as SweepFeed, sweepGraphFits } from '../graph/sweep-graph';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RuntimeSession } from '../runtime/session';
import type { TermName } from '../types';
import { type AblationPlan, modelTerms } from './ablation-spec';
import { checkLength, int64Feeds, type Prepared, prepareInput } from './input';
import { lazyGraph } from './lazy-graph';
import { checkSweepTarget, taskFollow } from './sweep-target';
import { taskWeights } from './task-head-run';
import { followedPosition, nameTokens, rateTokenInVariants, readPrediction } from './prediction-read';
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
    const graph = () => lazyGraph(this.model, { graph: 'sweep', start: layer });
    return this.session(layer, 'tail', graph, this.model.executionProvider, this.model.threads);
  }
}

/** How many variants one batched run takes at n tokens (attention, feed-forward and state arrays of each). */
function variantsPerRun(model: RunContext, n: number): number {
  const s = model.checkpoint.spec;
  const perVariant = 4 * (6 * s.numHeads * n * 2 * n + 3 * n * s.intermediateSize + 10 * n * s.hiddenSize);
  return Math.max(1, Math.floor(SWEEP_CHUNK_BYTES / perVariant));
}

/** One batched rerun of layers l… for `part` (each variant removes one head's term in layer l): the last hidden
 *  state at `positions` of each, [variants · positions, D], variant-major. */
async function runVariants(
  model: RunContext,
  session: RuntimeSession,
  part: { term: TermName; h: number }[],
  hidden: Float32Array,
  rel: Float32Array,
  relRows: number,
  n: number,
  positions: number[],
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
    [SweepFeed.positions]: { type: 'int64', data: BigInt64Array.from(positions, BigInt), dims: [positions.length] },
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

/** The value a sweep follows: the rows of the last hidden state it reads, its value before, and each variant's. */
interface Follow {
  rows: number[];
  before: number;
  /** `data`: `variants` × rows.length rows, variant-major. */
  rate(data: Float32Array, variants: number): Promise<FollowedCell[]>;
}
export type FollowedCell = { value: number } & Omit<SweepCell, 'layer' | 'head' | 'term' | 'drop'>;

/** `rows` of a hidden state [n, D], stacked. */
export function pickRows(hidden: Float32Array, rows: number[], D: number): Float32Array {
  const out = new Float32Array(rows.length * D);
  rows.forEach((r, k) => out.set(hidden.subarray(r * D, (r + 1) * D), k * D));
  return out;
}

/** The masked-LM follow: the log-probability of a token at `position` (the asked one, else as chooseSweepPosition
 *  says: the original token, or the first choice at an input [MASK]). */
export async function mlmFollow(
  model: RunContext,
  last: Float32Array,
  n: number,
  at0: { position: number; original?: number; asked?: number },
  addMs: (ms: number) => void,
  signal?: AbortSignal,
): Promise<{ follow: Follow; followed: NonNullable<SweepResult['followed']> }> {
  const { position, original, asked } = at0;
  const out = await model.heads.run(last, n, [position], [asked ?? original ?? 0], 1, false, signal);
  addMs(out.ms);
  const row = readPrediction(out.read, position, 1);
  const lse = first(out.read(HeadOutput.logSumExp), 'the log-sum-exp row');
  const token = asked ?? original ?? row.first.id;
  const before: TokenRating =
    asked === undefined && original === undefined
      ? { logit: row.first.logit, logprob: row.first.logit - lse, rank: 1 }
      : { logit: row.target.logit, logprob: row.target.logit - lse, rank: row.target.rank };
  const which = asked !== undefined ? 'asked' : original === undefined ? 'top1_before' : 'original';
  const follow: Follow = {
    rows: [position],
    before: before.logprob,
    rate: async (data, variants) =>
      (await rateTokenInVariants(model, data, variants, token, signal, addMs)).map((r) => ({
        value: r.logprob,
        logprob_after: r.logprob,
        rank_after: r.rank,
        top1_after: { id: r.firstId, token: `#${r.firstId}` },
      })),
  };
  return { follow, followed: { id: token, token: `#${token}`, which, before } };
}

export async function sweepWith(model: RunContext, input: SweepInput, signal?: AbortSignal): Promise<SweepResult> {
  const t0 = performance.now();
  const ck = model.checkpoint,
    spec = ck.spec;
  const terms = sweepTerms(input.terms, modelTerms(spec));
  const mode: AblationMode = input.mode ?? 'zero';
  const task = model.heads.heads.task;
  checkSweepTarget(ck, input.target);
  const askedToken = input.target && 'token' in input.target ? input.target.token : undefined;
  const prepared: Prepared = await prepareInput(model, { text: input.text, pair: input.pair, ids: input.ids }, signal);
  const { ids, tokens } = prepared;
  const n = ids.length;
  // Every refusal before anything runs: the task head's target (./sweep-target.ts) or the masked-LM position.
  const taskTarget = task
    ? taskFollow(taskWeights(ck, task), prepared, { target: input.target, position: input.position, sepId: model.tokenizer?.special.sep })
    : undefined;
  const { position, runIds, original } = task
    ? { position: 0, runIds: ids, original: undefined }
    : followedPosition(model, ids, input.position, 'rank heads on');
  checkLength(model, n);
  const L = spec.numLayers,
    H = spec.numHeads,
    D = spec.hiddenSize;
  const relative = spec.relativeAttention && spec.posAttType.length > 0;

  // One forward pass keeps every layer's input state: each cell's rerun starts from its layer's.
  const fetches = [...Array.from({ length: L }, (_, l) => layerInputOutput(l)), LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])];
  const fwd = await model.session.run('forward', int64Feeds(graphInputs(spec, runIds, prepared.tokenTypes)), fetches, signal);
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
  const addHeadMs = (ms: number) => (headMs += ms);

  let follow: Follow, followed: SweepResult['followed'], target: SweepTargetInfo | undefined;
  if (taskTarget) {
    const tf = taskTarget(last);
    target = tf.target;
    follow = {
      rows: tf.rows,
      before: tf.before,
      rate: (data, variants) => {
        const th = performance.now();
        const out = tf.rate(data, variants);
        addHeadMs(performance.now() - th);
        return Promise.resolve(out);
      },
    };
  } else {
    ({ follow, followed } = await mlmFollow(model, last, n, { position, original, asked: askedToken }, addHeadMs, signal));
  }

  const total = L * H * terms.length;
  let done = 0;
  const report = (layer: number) => input.onProgress?.({ done, total, layer } satisfies SweepProgress);
  report(0);
  const cells: SweepCell[] = [];
  const record = (l: number, h: number, term: TermName, after: FollowedCell) => {
    const { value, ...rest } = after;
    cells.push({ layer: l, head: h, term, drop: follow.before - value, ...rest });
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
            const session = await unlessAborted(sessions.start(l), signal);
            const rows = await runVariants(model, session, part, state, rel!, relRows, n, follow.rows, mode, signal);
            rerunMs += rows.ms;
            if (!rows.data.every(Number.isFinite))
              throw new LensError(`${ck.dir}: the reruns of layer ${l} gave non-finite states`, 'runtime');
            const after = await follow.rate(rows.data, part.length);
            part.forEach(({ term, h }, k) => record(l, h, term, at(after, k, 'variant')));
          }
        } else {
          for (const term of terms) {
            for (let h = 0; h < H; h++) {
              const plan: AblationPlan = { mode, layers: new Map([[l, { [term]: [h] }]]), firstLayer: l, entries: [`${l}.${h}:${term}`] };
              const tail = await unlessAborted(model.tails.run(plan, state, rel, relRows, n, signal), signal);
              rerunMs += tail.ms;
              if (!tail.hidden.every(Number.isFinite))
                throw new LensError(`${ck.dir}: the rerun without ${l}.${h}:${term} gave non-finite states`, 'runtime');
              record(l, h, term, first(await follow.rate(pickRows(tail.hidden, follow.rows, D), 1), 'the variant'));
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
  if (followed) await nameTokens(model, [followed, ...cells.flatMap((c) => (c.top1_after ? [c.top1_after] : []))], signal);
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
    position: task ? first(follow.rows, 'the rows followed') : position,
    source: original === undefined ? 'input' : 'masked',
    input_ids: ids,
    tokens,
    ...(followed ? { followed } : {}),
    ...(task && target ? { task: task.kind, target } : {}),
    grid,
    ranking: [...cells].sort((a, b) => b.drop - a.drop),
    timings: { forward_ms: fwd.ms, rerun_ms: rerunMs, head_ms: headMs, cells: total, total_ms: performance.now() - t0 },
  };
}
