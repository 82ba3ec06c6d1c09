// Which tokens made the model decide: occlusion. Every non-special token is taken out alone (or every word: the
// groups of pieces the caller gives) — replaced by [MASK] ('mask') or deleted ('remove') — and scored by how much
// the followed value drops (./occlusion-target.ts: a label's logit, a QA span's start + end logit, a masked token's
// log-probability). Variants of one method and length run as batches of the occlusion graph, each returning only the
// rows the head reads (./occlusion-batch.ts).
import { unlessAborted } from './abortable';
import type { OccludeInput, OcclusionMethod, OcclusionProgress, OcclusionResult, OcclusionScores } from '../api';
import { LensError } from '../errors';
import { occlusionGraphFits } from '../graph/occlusion-graph';
import type { RuntimeSession } from '../runtime/session';
import { checkLength, forwardOnly, type Prepared, prepareInput } from './input';
import { batchSizes, OcclusionSessions, runBatch, runOne, type Variant, variantLength, variantsPerRun } from './occlusion-batch';
import { checkOcclusionTarget, planOcclusion } from './occlusion-target';
import type { RunContext } from './run-context';

const METHODS: readonly OcclusionMethod[] = ['mask', 'remove'];

/** The methods asked for (default both), checked; 'mask' needs the tokenizer's mask id. */
function chooseMethods(asked: readonly string[] | undefined, maskId: number | undefined): { methods: OcclusionMethod[]; notes: string[] } {
  if (asked !== undefined) {
    if (asked.length === 0) throw new LensError('no occlusion method given: use mask, remove, or both');
    for (const m of asked)
      if (!METHODS.includes(m as OcclusionMethod)) throw new LensError(`occlusion method "${m}" is not mask or remove`);
  }
  const methods = METHODS.filter((m) => (asked ?? METHODS).includes(m));
  const noMask = 'the [MASK] id is unknown (ids given to a model folder without tokenizer files)';
  if (maskId !== undefined) return { methods, notes: [] };
  if (asked?.includes('mask')) throw new LensError(`occlusion by mask needs a [MASK] token, and ${noMask}: use --method remove`);
  return { methods: ['remove'], notes: [`mask left out: ${noMask}`] };
}

/** The units taken out: every token alone, or the groups asked for (each a word's pieces), checked against the input. */
function unitsOf(prepared: Prepared, groups: readonly (readonly number[])[] | undefined): number[][] {
  const n = prepared.ids.length;
  if (groups === undefined) return prepared.tokens.map((_, i) => [i]);
  const seen = new Set<number>();
  return groups.map((g, k) => {
    if (g.length === 0) throw new LensError(`occlusion group ${k} is empty: give each group's token positions`);
    for (const p of g) {
      if (!(Number.isInteger(p) && p >= 0 && p < n))
        throw new LensError(`occlusion group ${k} names position ${String(p)}, which does not exist: the input has tokens 0…${n - 1}`);
      if (seen.has(p)) throw new LensError(`position ${p} is in two occlusion groups: each token belongs to one word`);
      seen.add(p);
    }
    return [...g].sort((a, b) => a - b);
  });
}

/** The variants of one method: every unit but those holding a special or fixed position; a removal moves later rows
 *  up and cannot follow a row it deletes. */
function variantsOf(method: OcclusionMethod, prepared: Prepared, units: number[][], rows: number[], fixed: number[]): Variant[] {
  const out: Variant[] = [];
  const n = prepared.ids.length;
  for (const positions of units) {
    if (positions.some((i) => prepared.tokens[i]!.special || fixed.includes(i))) continue;
    // An input with nothing left once the unit is removed is no run.
    if (method === 'remove' && (n - positions.length < 1 || positions.some((i) => rows.includes(i)))) continue;
    const moved = (r: number) => r - positions.filter((i) => i < r).length;
    out.push({ method, positions, rows: method === 'mask' ? rows : rows.map(moved) });
  }
  return out;
}

/** Variants in runs of one length each (a word's removal shortens the input by its pieces), longest first. */
function byLength(variants: Variant[], n: number): Variant[][] {
  const out = new Map<number, Variant[]>();
  for (const v of variants) {
    const length = variantLength(v, n);
    out.set(length, [...(out.get(length) ?? []), v]);
  }
  return [...out.entries()].sort((a, b) => b[0] - a[0]).map(([, vs]) => vs);
}

/**
 * The occlusion of one input. `kept`: the model's occlusion process, started on first use and stopped with the model
 * (it holds a second copy of the weights; starting it costs about a second at v3-base); without it, a process is
 * started for this call and stopped after it.
 */
export async function occludeWith(
  model: RunContext,
  input: OccludeInput,
  signal?: AbortSignal,
  kept?: OcclusionSessions,
): Promise<OcclusionResult> {
  const t0 = performance.now();
  const ck = model.checkpoint;
  checkOcclusionTarget(ck, input);
  const maskId = model.tokenizer?.special.mask;
  const { methods, notes } = chooseMethods(input.methods, maskId);
  const prepared = await prepareInput(model, { text: input.text, pair: input.pair, ids: input.ids }, signal);
  const tokenizeMs = performance.now() - t0;
  const n = prepared.ids.length;
  if (input.position !== undefined && !(Number.isInteger(input.position) && input.position >= 0 && input.position < n))
    throw new LensError(`position ${input.position} does not exist: the input has tokens 0…${n - 1} ([CLS] is 0)`);
  let headMs = 0;
  const plan = planOcclusion(model, prepared, input, (ms) => (headMs += ms), signal);
  checkLength(model, n);

  const fwd = await forwardOnly(model, plan.runIds, signal, prepared.tokenTypes);
  let forwardMs = fwd.ms;
  const follow = await plan.follow(fwd.hidden);
  const units = unitsOf(prepared, typeof input.groups === 'function' ? input.groups(prepared.tokens) : input.groups);
  const all = methods.map((m) => variantsOf(m, prepared, units, follow.rows, plan.fixed));
  const total = all.reduce((s, vs) => s + vs.length, 0);
  let done = 0;
  const report = (method: OcclusionMethod) => input.onProgress?.({ done, total, method } satisfies OcclusionProgress);
  report(methods[0]!);

  const batched = input.batch !== false && occlusionGraphFits(ck);
  const sessions = batched ? (kept ?? new OcclusionSessions(model)) : undefined;
  const source = { ids: plan.runIds, types: prepared.tokenTypes, maskId };
  const scored: Partial<Record<OcclusionMethod, OcclusionScores>> = {};
  let runs = 0,
    batchSize = 0,
    startMs = 0;
  let session: RuntimeSession | undefined;
  try {
    for (const [j, method] of methods.entries()) {
      const variants = all[j]!;
      const scores: (number | null)[] = new Array<number | null>(n).fill(null);
      const after: (number | null)[] = new Array<number | null>(n).fill(null);
      const record = (part: Variant[], values: number[]) => {
        part.forEach((v, k) => {
          // Every piece of a word holds the word's score.
          for (const p of v.positions) {
            after[p] = values[k]!;
            scores[p] = follow.before - values[k]!;
          }
        });
        done += part.length;
        report(method);
      };
      for (const same of byLength(variants, n)) {
        const length = variantLength(same[0]!, n);
        // One variant a run when the batch would not fit more (long inputs): the plain forward graph then.
        const most = sessions ? variantsPerRun(ck.spec, length, model.graphCache.options.headGroup) : 1;
        if (sessions && most > 1 && same.length > 1 && !session) {
          const ts = performance.now();
          session = await unlessAborted(sessions.start(), signal);
          startMs += performance.now() - ts;
        }
        let v0 = 0;
        for (const size of batchSizes(same.length, session && most > 1 ? most : 1)) {
          const part = same.slice(v0, v0 + size);
          v0 += size;
          const rows =
            session && size > 1 ? await runBatch(model, session, part, source, signal) : await runOne(model, part[0]!, source, signal);
          forwardMs += rows.ms;
          runs++;
          batchSize = Math.max(batchSize, size);
          record(part, await follow.rate(rows.data, size));
        }
      }
      scored[method] = { scores, after };
    }
  } catch (e) {
    // A cancelled or failed run leaves its process mid-run: stop it (the next call starts a fresh one).
    await sessions?.dispose();
    throw e;
  }
  if (sessions !== kept) await sessions?.dispose();
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    task: plan.task,
    input_ids: prepared.ids,
    tokens: prepared.tokens,
    mask_id: maskId ?? null,
    target: follow.target,
    before: follow.before,
    methods: scored,
    ...(input.groups !== undefined ? { groups: units } : {}),
    ...(notes.length ? { notes } : {}),
    timings: {
      tokenize_ms: tokenizeMs,
      forward_ms: forwardMs,
      head_ms: headMs,
      start_ms: startMs,
      total_ms: performance.now() - t0,
      variants: total,
      runs,
      batch_size: batchSize,
      batched: batchSize > 1,
    },
  };
}
