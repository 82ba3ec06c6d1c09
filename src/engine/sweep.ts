// Which heads matter at one position: each head's term removed alone (one intervention per cell), heads ranked by
// how much the followed token's log-probability drops. Every rerun starts at the head's own layer, from that layer's
// input state as one plain forward pass left it.
import { type AblationMode, type AblationPlan, modelTerms } from './ablation-spec';
import { LensError } from './errors';
import { checkLength, int64Feeds, prepareInput } from './explain';
import { LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from './graph/deberta-graph';
import { graphInputs } from './graph/graph-inputs';
import { HeadOutput } from './graph/head-graph';
import { requireMlmHead } from './ablate';
import { loadCheckpoint } from './checkpoint';
import { resolveModelDir } from './model';
import type { OpenModel } from './model';
import { nameTokens, positionsToPredict, readPredictions } from './predict';
import type { SweepCell, SweepInput, SweepProgress, SweepResult, TokenRating } from './prediction';
import type { TermName } from './types';

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

/** Checks a sweep's terms against a model's config alone (no graph built, nothing run): the CLI's first step. */
export async function checkSweep(modelDir: string, terms: string[]): Promise<TermName[]> {
  const ck = await loadCheckpoint(resolveModelDir(modelDir), { hash: false });
  const out = sweepTerms(terms, modelTerms(ck.spec));
  requireMlmHead(ck);
  return out;
}

/** The one position a sweep follows: the asked one, else the input's first [MASK]. */
function chooseSweepPosition(model: OpenModel, ids: number[], asked: number | undefined) {
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, asked === undefined ? undefined : [asked]);
  if (asked === undefined) {
    if (inputMasks.length === 0) {
      throw new LensError('nothing to rank heads on: the input has no [MASK] token and no position was given; write [MASK] where a word should be predicted, or name a position (--position 3)');
    }
    return { position: inputMasks[0], runIds: ids, original: undefined };
  }
  if (toMask.length === 0) return { position: asked, runIds: ids, original: undefined };
  const runIds = ids.slice();
  runIds[asked] = maskId!;
  return { position: asked, runIds, original: ids[asked] };
}

export async function sweepWith(model: OpenModel, input: SweepInput, signal?: AbortSignal): Promise<SweepResult> {
  const t0 = performance.now();
  const ck = model.checkpoint, spec = ck.spec;
  const terms = sweepTerms(input.terms, modelTerms(spec));
  const mode: AblationMode = input.mode ?? 'zero';
  requireMlmHead(ck);
  const { ids, tokens } = await prepareInput(model, { text: input.text, ids: input.ids }, signal);
  const n = ids.length;
  const { position, runIds, original } = chooseSweepPosition(model, ids, input.position);
  checkLength(model, n);
  const L = spec.numLayers, H = spec.numHeads;
  const relative = spec.relativeAttention && spec.posAttType.length > 0;

  // One forward pass keeps every layer's input state: each cell's rerun starts from its layer's.
  const fetches = [...Array.from({ length: L }, (_, l) => layerInputOutput(l)), LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])];
  const fwd = await model.session.run('forward', int64Feeds(graphInputs(spec, runIds)), fetches, signal);
  let states: Float32Array[], last: Float32Array, rel: Float32Array | undefined, relRows = 0;
  try {
    states = Array.from({ length: L }, (_, l) => fwd.outputs.read(layerInputOutput(l)));
    last = fwd.outputs.read(LAST_HIDDEN);
    if (relative) [rel, relRows] = [fwd.outputs.read(REL_OUTPUT), fwd.outputs.dims(REL_OUTPUT)[0]];
  } finally {
    fwd.outputs.release();
  }
  let rerunMs = 0, headMs = 0;

  /** The followed token's logit, log-probability and rank, and the first choice, on a last hidden state. */
  const rate = async (hidden: Float32Array, target: number) => {
    const out = await model.heads.run(hidden, n, [position], [target], 1, false, signal);
    headMs += out.ms;
    const [row] = readPredictions(out.read, [position], 1);
    const lse = out.read(HeadOutput.logSumExp)[0];
    const top: TokenRating = { logit: row.top[0].logit, logprob: row.top[0].logit - lse, rank: 1 };
    return { rating: { logit: row.target.logit, logprob: row.target.logit - lse, rank: row.target.rank }, top1: row.top[0].id, top };
  };
  // Before: at an input [MASK] the followed token is the first choice, else the original token.
  const first = await rate(last, original ?? 0);
  const target = original ?? first.top1;
  const before = original === undefined ? first.top : first.rating;

  const total = L * H * terms.length;
  let done = 0;
  const report = (layer: number) => input.onProgress?.({ done, total, layer } satisfies SweepProgress);
  report(0);
  const cells: SweepCell[] = [];
  for (let l = 0; l < L; l++) {
    try {
      for (const term of terms) {
        for (let h = 0; h < H; h++) {
          const plan: AblationPlan = { mode, layers: new Map([[l, { [term]: [h] }]]), firstLayer: l, entries: [`${l}.${h}:${term}`] };
          const tail = await model.tails.run(plan, states[l], rel, relRows, n, signal);
          rerunMs += tail.ms;
          if (!tail.hidden.every(Number.isFinite)) throw new LensError(`${ck.dir}: the rerun without ${l}.${h}:${term} gave non-finite states`, 'runtime');
          const after = await rate(tail.hidden, target);
          cells.push({ layer: l, head: h, term, logprob_after: after.rating.logprob, rank_after: after.rating.rank, drop: before.logprob - after.rating.logprob, top1_after: { id: after.top1, token: `#${after.top1}` } });
          done++;
          report(l);
        }
      }
    } finally {
      // Each start layer's rerun process holds that layer's weights and all later ones': one at a time.
      await model.tails.idle(l);
    }
  }
  const followed = { id: target, token: `#${target}` };
  await nameTokens(model, [followed, ...cells.map((c) => c.top1_after)], signal);
  const grid = Object.fromEntries(terms.map((t) => [t, Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => cells.find((c) => c.term === t && c.layer === l && c.head === h)!.drop))])) as SweepResult['grid'];
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
