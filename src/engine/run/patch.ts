// Activation patching: what carries a decision. The clean and the corrupted text run once each, keeping the states
// entering every layer; a patch then reruns the corrupted text from the first layer it touches with the clean run's
// values put in (./patch-spec.ts says which: a head's term, score or context vector, rows of a state, knocked-out
// edges) and reads the target (./patch-target.ts). restored = (patched − corrupt) / (clean − corrupt). A trace patches
// every head's term, or every state row, alone: the cells that start at one layer run as batches (./patch-batch.ts).
import { unlessAborted } from './abortable';
import { first } from '../../shared/checked';
import { LensError } from '../errors';
import { LAST_HIDDEN, layerInputOutput, REL_OUTPUT, termFlags } from '../graph/deberta-io';
import { graphInputs } from '../graph/graph-inputs';
import type { TermName } from '../types';
import { modelTerms } from './ablation-spec';
import { checkLength, int64Feeds, type Prepared, prepareInput } from './input';
import { batchSizes, variantsPerRun } from './occlusion-batch';
import { graphOptions, type KeptRuns, PatchSessions, runPatches } from './patch-batch';
import { cellPlan, type PatchPlan, parsePatch } from './patch-spec';
import { checkPatchTarget, type PatchFollow, planPatchTarget } from './patch-target';
import type { PatchGrid, PatchInput, PatchResult, PatchTrace } from '../api';
import { flowTrace } from './patch-flow';
import { pairPositions } from './patch-align';
import { explainWith } from './explain';
import type { ExplainResult } from '../result/explain-result';
import { predictOnHidden } from './predict';
import type { RunContext } from './run-context';

/** The forward pass keeping every layer's input state, the final state and the relative rows (where the model has them). */
async function keepStates(model: RunContext, ids: number[], types: number[] | undefined, signal?: AbortSignal) {
  const spec = model.checkpoint.spec,
    L = spec.numLayers;
  const relative = termFlags(spec).relative;
  const fetches = [...Array.from({ length: L }, (_, l) => layerInputOutput(l)), LAST_HIDDEN, ...(relative ? [REL_OUTPUT] : [])];
  const fwd = await model.session.run('forward', int64Feeds(graphInputs(spec, ids, types)), fetches, signal);
  try {
    const states = [...Array.from({ length: L }, (_, l) => fwd.outputs.read(layerInputOutput(l))), fwd.outputs.read(LAST_HIDDEN)];
    // BERT and DeBERTa without relative terms have no relative rows.
    if (!relative) return { ms: fwd.ms, states, rel: undefined, relRows: 0 };
    const rel = fwd.outputs.read(REL_OUTPUT);
    return { ms: fwd.ms, states, rel, relRows: first(fwd.outputs.dims(REL_OUTPUT), 'the shape of the relative rows') };
  } finally {
    fwd.outputs.release();
  }
}

function pickRows(hidden: Float32Array, rows: number[], D: number): Float32Array {
  const out = new Float32Array(rows.length * D);
  rows.forEach((r, k) => out.set(hidden.subarray(r * D, (r + 1) * D), k * D));
  return out;
}

/** Everything checked before anything runs: the model, the target, both texts' lengths and the spec. */
async function prepare(model: RunContext, input: PatchInput, signal?: AbortSignal) {
  const ck = model.checkpoint;
  if (input.patch === undefined && input.trace === undefined)
    throw new LensError('nothing to patch: give a patch spec (--patch) or a trace (--trace heads|resid)');
  if (input.patch !== undefined && input.trace !== undefined)
    throw new LensError('a patch spec and a trace are two different runs: give one of them');
  checkPatchTarget(ck, input.target);
  if (input.patch !== undefined) parsePatch(input.patch, ck.spec);
  if (input.corrupt === undefined && input.corruptIds === undefined) {
    if (input.trace !== 'flow') throw new LensError('patching needs a corrupted text (--corrupt TEXT)');
    input = { ...input, corrupt: input.text, corruptPair: input.pair, corruptIds: input.ids };
  }
  if (input.threshold !== undefined && !(Number.isFinite(input.threshold) && input.threshold >= 0))
    throw new LensError(`the flow threshold must be a number ≥ 0, got ${input.threshold}`);
  const clean = await prepareInput(model, { text: input.text, pair: input.pair, ids: input.ids }, signal);
  const corrupt = await prepareInput(model, { text: input.corrupt, pair: input.corruptPair, ids: input.corruptIds }, signal);
  const n = clean.ids.length,
    m = corrupt.ids.length;
  if (input.position !== undefined && !(Number.isInteger(input.position) && input.position >= 0 && input.position < n))
    throw new LensError(`position ${input.position} does not exist: the clean text has tokens 0…${n - 1} ([CLS] is 0)`);
  const plan = input.patch !== undefined ? parsePatch(input.patch, ck.spec, n) : undefined;
  // Different lengths: clean positions pair with corrupted ones (./patch-align.ts); a state goes row by row, but a
  // head's n × n terms have no place in the corrupted run's m × m scores.
  const pairs = m === n ? Array.from({ length: n }, (_, i) => i) : pairPositions(clean.tokens, corrupt.tokens);
  if (m !== n && ((plan !== undefined && plan.heads.size > 0) || input.trace === 'heads'))
    throw new LensError(
      `the clean text is ${n} tokens and the corrupted one ${m}: a head's terms (L.H:TERM, L.H:out, --trace heads) go in position by position, so both must tokenize to the same length (swap words for words of as many tokens); states (resid:L, resid:L@i, --trace resid) are put in where the texts' tokens pair up`,
    );
  checkLength(model, Math.max(n, m));
  return { clean, corrupt, n, m, pairs, plan: plan && m !== n ? pairPlan(plan, pairs, clean) : plan, input };
}

/** A plan in clean positions moved to the corrupted run's (knockouts included); a position with no counterpart is
 *  named, and resid:L at every position takes the positions that pair up. */
function pairPlan(plan: PatchPlan, pairs: number[], clean: Prepared): PatchPlan {
  const to = (i: number, part: string) => {
    const j = pairs[i]!;
    if (j < 0)
      throw new LensError(
        `${part}: clean token ${i} ${JSON.stringify(clean.tokens[i]?.text ?? '')} has no counterpart in the corrupted text (the texts differ there); pick a position both texts share`,
      );
    return j;
  };
  const resid = new Map<number, number[] | 'all'>();
  for (const [l, where] of plan.resid) resid.set(l, where === 'all' ? 'all' : where.map((i) => to(i, `resid:${l}@${i}`)));
  const knock = new Map(
    [...plan.knock].map(([l, edges]) => [
      l,
      edges.map(([i, j]) => [to(i, `knock:${l}:${i}->${j}`), to(j, `knock:${l}:${i}->${j}`)] as [number, number]),
    ]),
  );
  return { ...plan, resid, knock };
}

/** The corrupted ids as they run: a position the clean run masks to follow it is masked in the corrupted run too. */
function corruptRunIds(clean: Prepared, cleanRun: number[], corrupt: Prepared, pairs: number[]): number[] {
  const ids = corrupt.ids.slice();
  pairs.forEach((j, i) => {
    if (j >= 0 && cleanRun[i] !== clean.ids[i]) ids[j] = cleanRun[i]!;
  });
  return ids;
}

/** The clean states in the corrupted run's positions: a paired row is the clean one, any other the corrupted one's
 *  (so "every position" puts in what pairs up and leaves the rest). */
function pairedStates(clean: Float32Array[], corrupt: Float32Array[], pairs: number[], D: number): Float32Array[] {
  return corrupt.map((x, l) => {
    const out = x.slice();
    pairs.forEach((j, i) => j >= 0 && out.set(clean[l]!.subarray(i * D, (i + 1) * D), j * D));
    return out;
  });
}

/** `sessions`: the model's patch processes (kept between calls); without them, started for this call and stopped after. */
export async function patchWith(model: RunContext, input: PatchInput, signal?: AbortSignal, kept?: PatchSessions): Promise<PatchResult> {
  const t0 = performance.now();
  const spec = model.checkpoint.spec,
    L = spec.numLayers,
    H = spec.numHeads,
    D = spec.hiddenSize;
  const { clean, corrupt, n, m, pairs, plan, input: asked } = await prepare(model, input, signal);
  input = asked;
  let headMs = 0,
    rerunMs = 0,
    runs = 0,
    reruns = 0,
    batchSize = 0;
  let rerunProvider: string | undefined;
  const addHeadMs = (ms: number) => (headMs += ms);
  const target = planPatchTarget(model, clean, input, addHeadMs, signal);
  const cleanRun = target.runIds;
  const corruptRun = corruptRunIds(clean, cleanRun, corrupt, pairs);

  const c = await keepStates(model, cleanRun, clean.tokenTypes, signal);
  const x = await keepStates(model, corruptRun, corrupt.tokenTypes, signal);
  const runsKept: KeptRuns = {
    n: m,
    clean: m === n ? c.states : pairedStates(c.states, x.states, pairs, D),
    corrupt: x.states,
    rel: x.rel,
    relRows: x.relRows,
  };
  const follow: PatchFollow = await target.follow(c.states[L]!);
  // The rows the target reads, in the corrupted run's positions.
  const rows = follow.rows.map((i) => {
    if (pairs[i]! < 0)
      throw new LensError(
        `the target reads clean token ${i} ${JSON.stringify(clean.tokens[i]?.text ?? '')}, which has no counterpart in the corrupted text: change the text around it, not the token itself`,
      );
    return pairs[i]!;
  });
  const cleanValue = follow.before;
  const corruptValue = first(await follow.rate(pickRows(x.states[L]!, rows, D), 1), 'the corrupted value');
  // + 0: no −0 when nothing moved.
  const restored = (v: number) => (cleanValue === corruptValue ? null : (v - corruptValue) / (cleanValue - corruptValue) + 0);
  const asRun = (p: Prepared, ids: number[]) => ({ ...p, ids });
  const cleanPred = await predictOnHidden(model, asRun(clean, cleanRun), c.states[L]!, input.pair, signal);
  const corruptPred = await predictOnHidden(model, asRun(corrupt, corruptRun), x.states[L]!, input.corruptPair, signal);

  const sessions = kept ?? new PatchSessions(model);
  /** Reruns `plans` (grouped by start layer, in batches that fit) → each one's rows at `positions`. */
  const rerun = async (
    plans: PatchPlan[],
    positions: number[],
    onRun: (part: number[], data: Float32Array) => Promise<void>,
    base = runsKept,
  ) => {
    const byStart = new Map<number, number[]>();
    plans.forEach((p, k) => byStart.set(p.firstLayer, [...(byStart.get(p.firstLayer) ?? []), k]));
    for (const [start, idx] of [...byStart].sort(([a], [b]) => a - b)) {
      const o = graphOptions(
        start,
        idx.map((k) => plans[k]!),
      );
      const most = input.batch === false ? 1 : variantsPerRun(spec, base.n, H);
      let k0 = 0;
      const session = await unlessAborted(sessions.start(o), signal);
      rerunProvider = session.provider;
      for (const size of batchSizes(idx.length, most)) {
        const part = idx.slice(k0, k0 + size);
        k0 += size;
        const out = await runPatches(
          model,
          session,
          o,
          part.map((k) => plans[k]!),
          base,
          positions,
          signal,
        );
        rerunMs += out.ms;
        runs++;
        reruns += size;
        batchSize = Math.max(batchSize, size);
        await onRun(part, out.data);
      }
    }
  };

  let patch: PatchResult['patch'], patched: PatchResult['patched'], grid: PatchGrid | undefined;
  try {
    if (plan) {
      let last = x.states[L]!;
      if (plan.firstLayer < L) {
        const all = Array.from({ length: m }, (_, i) => i);
        await rerun([plan], all, (_, data) => Promise.resolve(void (last = data)));
      }
      const value = first(await follow.rate(pickRows(last, rows, D), 1), 'the patched value');
      patch = { entries: plan.entries, first_layer: Math.min(plan.firstLayer, L), value, restored: restored(value) };
      patched = await predictOnHidden(model, asRun(corrupt, corruptRun), last, input.corruptPair, signal);
    } else grid = await trace(input.trace!);
  } catch (e) {
    // A cancelled or failed run leaves its process mid-run: stop it (the next call starts a fresh one).
    await sessions.dispose();
    throw e;
  }
  if (sessions !== kept) await sessions.dispose();

  async function trace(kind: PatchTrace): Promise<PatchGrid> {
    if (kind === 'flow') return flow();
    const terms: TermName[] = modelTerms(spec);
    const cells =
      kind === 'heads'
        ? Array.from({ length: L }, (_, l) =>
            terms.flatMap((site) => Array.from({ length: H }, (_, h) => ({ layer: l, head: h, site }))),
          ).flat()
        : Array.from({ length: L + 1 }, (_, l) => Array.from({ length: n }, (_, i) => ({ resid: l, position: pairs[i]! }))).flat();
    // A clean position with no counterpart has no cell to run (its value stays NaN: null in JSON).
    const cellPlans = cells.map((cell) => ('resid' in cell && cell.position < 0 ? undefined : cellPlan(spec, cell)));
    const plans = cellPlans.filter((p) => p !== undefined);
    const cellOf = cellPlans.flatMap((p, k) => (p ? [k] : []));
    const values = new Array<number>(cells.length).fill(NaN);
    let done = 0;
    input.onProgress?.({ done, total: plans.length, layer: 0 });
    await rerun(plans, rows, async (part, data) => {
      const after = await follow.rate(data, part.length);
      part.forEach((k, j) => (values[cellOf[k]!] = after[j]!));
      done += part.length;
      input.onProgress?.({ done, total: plans.length, layer: plans[part[0]!]!.firstLayer });
    });
    if (kind === 'resid') {
      const value = Array.from({ length: L + 1 }, (_, l) => values.slice(l * n, (l + 1) * n));
      return {
        kind,
        axes: ['layer', 'position'],
        value,
        restored: value.map((row) => row.map((v) => (Number.isNaN(v) ? null : restored(v)))),
      };
    }
    const value = Object.fromEntries(
      terms.map((t, ti) => [
        t,
        Array.from({ length: L }, (_, l) => values.slice((l * terms.length + ti) * H, (l * terms.length + ti + 1) * H)),
      ]),
    ) as Record<TermName, number[][]>;
    const rest = Object.fromEntries(terms.map((t) => [t, value[t].map((row) => row.map(restored))]));
    return { kind, axes: ['term', 'layer', 'head'], terms, value, restored: rest };
  }

  /** Knockouts on the clean run (its states as the base), walking back from the target's rows (./patch-flow.ts). */
  async function flow(): Promise<PatchGrid> {
    const onClean: KeptRuns = { n, clean: c.states, corrupt: c.states, rel: c.rel, relRows: c.relRows };
    const threshold = input.threshold ?? (cleanValue === corruptValue ? 0.01 : 0.1 * Math.abs(cleanValue - corruptValue));
    let explained: ExplainResult | undefined;
    try {
      return await flowTrace(
        spec,
        n,
        follow.rows,
        cleanValue,
        threshold,
        async (plans) => {
          const values = new Array<number>(plans.length).fill(NaN);
          await rerun(
            plans,
            follow.rows,
            async (part, data) => {
              const after = await follow.rate(data, part.length);
              part.forEach((k, j) => (values[k] = after[j]!));
            },
            onClean,
          );
          return values;
        },
        async (layer, edges) => {
          explained ??= await explainWith(model, { ids: cleanRun }, signal);
          await explained.load(layer, signal);
          const r = explained;
          return edges.map(([i, j]) =>
            Object.fromEntries(
              modelTerms(spec).map((t) => [
                t,
                Array.from({ length: H }, (_, h) => Math.abs(r.value(layer, h, t, i, j))).reduce((a, b) => a + b, 0),
              ]),
            ),
          );
        },
        (done, total, layer) => input.onProgress?.({ done, total, layer }),
      );
    } finally {
      explained?.release();
    }
  }

  return {
    model: { ...model.info, execution_provider: model.session.provider },
    input_ids: cleanRun,
    tokens: clean.tokens,
    corrupt_ids: corruptRun,
    corrupt_tokens: corrupt.tokens,
    target: follow.target,
    clean_value: cleanValue,
    corrupt_value: corruptValue,
    clean: cleanPred,
    corrupt: corruptPred,
    ...(patched ? { patched } : {}),
    ...(patch ? { patch } : {}),
    ...(grid ? { grid } : {}),
    ...(m !== n ? { paired: pairs.map((j) => (j < 0 ? null : j)) } : {}),
    timings: {
      forward_ms: c.ms + x.ms,
      rerun_ms: rerunMs,
      head_ms: headMs,
      reruns,
      runs,
      batch_size: batchSize,
      ...(rerunProvider ? { rerun_provider: rerunProvider } : {}),
      total_ms: performance.now() - t0,
    },
  };
}
