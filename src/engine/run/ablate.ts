// Interventions: remove attention terms of chosen heads inside the real forward pass and rerun every later layer,
// from the first layer the intervention touches (its input state comes from the plain forward pass).
import type { AblateInput, AblateResult, PositionPrediction, TokenRating, TrackedToken } from '../api';
import { at, first } from '../../shared/checked';
import { LensError } from '../errors';
import { LAST_HIDDEN, layerInputOutput, REL_OUTPUT } from '../graph/deberta-io';
import { graphInputs } from '../graph/graph-inputs';
import { HeadOutput } from '../graph/head-graph';
import { emdKeep, parseAblation, planSummary, touchesEmd } from './ablation-spec';
import { emdLengthProblem, emdPlan } from '../checkpoint/emd';
import { ablateTask } from './ablate-task';
import { checkLength, int64Feeds, prepareInput } from './input';
import { checkTop, nameTokens, positionsToPredict, type PredictionRow, readPredictions, requireMlmHead } from './prediction-read';
import type { RunContext } from './run-context';

export async function ablateWith(model: RunContext, input: AblateInput, signal?: AbortSignal): Promise<AblateResult> {
  const t0 = performance.now();
  const ck = model.checkpoint,
    spec = ck.spec;
  // The spec is checked against the model before anything is tokenized or run.
  // Layers numLayers and numLayers + 1 are the Enhanced Mask Decoder's passes where the model decodes through them.
  const emdPasses = model.heads.heads.mlm && emdPlan(ck, model.heads.heads).kind === 'passes' ? 2 : 0;
  const plan = parseAblation(input.ablate, spec, input.mode ?? 'zero', '--ablate', emdPasses);
  const inEmd = touchesEmd(plan, spec.numLayers);
  const heads = model.heads.heads;
  if (!heads.mlm && (heads.task || heads.taskProblem)) return ablateTask(model, plan, input, signal);
  requireMlmHead(ck);
  const k = checkTop(model, input.top);
  const { ids, tokens } = await prepareInput(model, { text: input.text, ids: input.ids }, signal);
  const n = ids.length;
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, input.positions);
  if (inputMasks.length === 0 && toMask.length === 0) {
    throw new LensError(
      'nothing to compare: the input has no [MASK] token and no positions were given; write [MASK] where a word should be predicted, or name positions to mask (--positions 3,7)',
    );
  }
  checkLength(model, n);
  if (inEmd) {
    const plan2 = emdPlan(ck, heads);
    const tooLong = plan2.kind === 'passes' ? emdLengthProblem(ck, plan2.rows, n) : undefined;
    if (tooLong) throw new LensError(tooLong.replace(/: predictions come from .*; /, ': '), 'invalid-input');
  }
  const t1 = performance.now();
  let forwardMs = 0,
    rerunMs = 0,
    headMs = 0;
  const relative = spec.relativeAttention && spec.posAttType.length > 0;

  /** One input (the [MASK]s as given, or one position masked): forward, rerun from the first layer, both heads. */
  /** In the EMD: both states the LM head reads, its passes as they run and with the terms removed. */
  const throughEmd = async (runIds: number[]) => {
    const keepAll = emdKeep({ ...plan, layers: new Map() }, spec);
    const b = await model.heads.runEmdEdit(runIds, keepAll, false, signal);
    const a = await model.heads.runEmdEdit(runIds, emdKeep(plan, spec), plan.mode === 'mean', signal);
    forwardMs += b.forwardMs + a.forwardMs;
    rerunMs += b.passesMs + a.passesMs;
    return { before: b.hidden, after: a.hidden };
  };

  const compare = async (runIds: number[], positions: number[], originals: (number | undefined)[]) => {
    const { before, after } = inEmd ? await throughEmd(runIds) : await encoderRun(runIds);
    if (!after.every(Number.isFinite)) throw new LensError(`${ck.dir}: the rerun after the intervention gave non-finite states`, 'runtime');
    return rowsOf(before, after, positions, originals);
  };

  /** In the encoder: the forward, then the rerun from the first layer the plan touches. */
  const encoderRun = async (runIds: number[]) => {
    const start = layerInputOutput(plan.firstLayer);
    const fetches = [start, LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])];
    const fwd = await model.session.run('forward', int64Feeds(graphInputs(spec, runIds)), fetches, signal);
    let state: Float32Array,
      before: Float32Array,
      rel: Float32Array | undefined,
      relRows = 0;
    try {
      [state, before] = [fwd.outputs.read(start), fwd.outputs.read(LAST_HIDDEN)];
      if (relative) [rel, relRows] = [fwd.outputs.read(REL_OUTPUT), first(fwd.outputs.dims(REL_OUTPUT), 'the shape of the relative rows')];
    } finally {
      fwd.outputs.release();
    }
    forwardMs += fwd.ms;
    const tail = await model.tails.run(plan, state, rel, relRows, n, signal);
    rerunMs += tail.ms;
    return { before, after: tail.hidden };
  };

  const rowsOf = async (before: Float32Array, after: Float32Array, positions: number[], originals: (number | undefined)[]) => {
    const outBefore = await model.heads.run(
      before,
      n,
      positions,
      originals.map((id) => id ?? 0),
      k,
      false,
      signal,
    );
    const rowsBefore = readPredictions(outBefore.read, positions, k);
    // The token followed: the original where there is one, else the first choice before.
    const tracked = originals.map((id, r) => id ?? at(rowsBefore, r, 'row').first.id);
    const outAfter = await model.heads.run(after, n, positions, tracked, k, false, signal, before);
    headMs += outBefore.ms + outAfter.ms;
    const rowsAfter = readPredictions(outAfter.read, positions, k);
    const kl = outAfter.read(HeadOutput.kl);
    const rating = (row: PredictionRow, lse: number): TokenRating => ({
      logit: row.target.logit,
      logprob: row.target.logit - lse,
      rank: row.target.rank,
    });
    const lseBefore = outBefore.read(HeadOutput.logSumExp),
      lseAfter = outAfter.read(HeadOutput.logSumExp);
    return positions.map((position, r) => {
      const original = originals[r];
      const rowBefore = at(rowsBefore, r, 'row'),
        rowAfter = at(rowsAfter, r, 'row'),
        id = at(tracked, r, 'row');
      const beforeRating =
        original === undefined
          ? { logit: rowBefore.first.logit, logprob: rowBefore.first.logit - at(lseBefore, r, 'row'), rank: 1 }
          : rating(rowBefore, at(lseBefore, r, 'row'));
      const source = original === undefined ? ('input' as const) : ('masked' as const);
      const withOriginal = (row: PredictionRow): PositionPrediction => ({
        position,
        source,
        top: row.top,
        ...(original === undefined ? {} : { original: { ...row.target, id: original, token: `#${original}` } }),
      });
      const followed: TrackedToken = {
        position,
        id,
        token: `#${id}`,
        which: original === undefined ? 'top1_before' : 'original',
        before: beforeRating,
        after: rating(rowAfter, at(lseAfter, r, 'row')),
      };
      return { before: withOriginal(rowBefore), after: withOriginal(rowAfter), kl: { position, kl: at(kl, r, 'row') }, tracked: followed };
    });
  };

  const rows =
    inputMasks.length > 0
      ? await compare(
          ids,
          inputMasks,
          inputMasks.map(() => undefined),
        )
      : [];
  for (const p of toMask) {
    const masked = ids.slice();
    masked[p] = maskId!;
    rows.push(...(await compare(masked, [p], [at(ids, p, 'position')])));
  }
  rows.sort((a, b) => a.kl.position - b.kl.position);
  const before = rows.map((r) => r.before),
    after = rows.map((r) => r.after),
    tracked = rows.map((r) => r.tracked);
  const originals = (ps: PositionPrediction[]) => ps.flatMap((p) => (p.original ? [p.original] : []));
  await nameTokens(model, [...[...before, ...after].flatMap((p) => p.top), ...originals(before), ...originals(after), ...tracked], signal);
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    ablation: planSummary(plan, spec.numLayers),
    mask_id: maskId ?? null,
    input_ids: ids,
    tokens,
    before,
    after,
    kl: rows.map((r) => r.kl),
    tracked,
    timings: { tokenize_ms: t1 - t0, forward_ms: forwardMs, rerun_ms: rerunMs, head_ms: headMs, total_ms: performance.now() - t0 },
  };
}
