// Head ranking inside the Enhanced Mask Decoder: each (pass, head, term) of the EMD's two passes removed alone, the
// followed token's log-probability read through the decoder (before: the passes untouched). One forward and the EMD
// intervention graph per cell, chained in the encoder's process (cells are few: 2 passes × heads × terms).
import type { AblationMode, SweepCell, SweepInput, SweepProgress, SweepResult } from '../api';
import { first } from '../../shared/checked';
import { emdLengthProblem, emdPlan } from '../checkpoint/emd';
import { LensError } from '../errors';
import type { TermName } from '../types';
import { unlessAborted } from './abortable';
import { modelTerms } from './ablation-spec';
import { checkLength, prepareInput } from './input';
import { followedPosition, nameTokens } from './prediction-read';
import type { RunContext } from './run-context';
import { mlmFollow, pickRows, sweepTerms, type FollowedCell } from './sweep';

export async function sweepEmdWith(model: RunContext, input: SweepInput, signal?: AbortSignal): Promise<SweepResult> {
  const t0 = performance.now();
  const ck = model.checkpoint,
    spec = ck.spec;
  const plan = emdPlan(ck, model.heads.heads);
  if (!model.heads.heads.mlm || plan.kind !== 'passes')
    throw new LensError(
      `${ck.name} has no Enhanced Mask Decoder passes to rank (it needs microsoft's lm_predictions.lm_head.* head and the absolute position table, position_biased_input false)`,
      'unsupported',
    );
  if (input.target && !('token' in input.target))
    throw new LensError('a head ranking in the Enhanced Mask Decoder follows a token: the decoder serves the masked-LM head only');
  const terms = sweepTerms(input.terms, modelTerms(spec));
  const mode: AblationMode = input.mode ?? 'zero';
  const asked = input.target && 'token' in input.target ? input.target.token : undefined;
  const prepared = await prepareInput(model, { text: input.text, ids: input.ids }, signal);
  const { ids, tokens } = prepared;
  const n = ids.length;
  const { position, runIds, original } = followedPosition(model, ids, input.position, 'rank heads on');
  checkLength(model, n);
  const tooLong = emdLengthProblem(ck, plan.rows, n);
  if (tooLong) throw new LensError(tooLong.replace(/: predictions come from .*; /, ': '), 'invalid-input');
  const L = spec.numLayers,
    H = spec.numHeads,
    D = spec.hiddenSize;
  const keepOf = (pass?: number, term?: TermName, head?: number) =>
    Object.fromEntries(
      modelTerms(spec).map((t) => {
        const keep = new Float32Array(2 * H).fill(1);
        if (pass !== undefined && t === term) keep[pass * H + head!] = 0;
        return [t, keep];
      }),
    );
  let forwardMs = 0,
    rerunMs = 0,
    headMs = 0;
  const before = await model.heads.runEmdEdit(runIds, keepOf(), false, signal);
  forwardMs += before.forwardMs;
  rerunMs += before.passesMs;
  const { follow, followed } = await mlmFollow(model, before.hidden, n, { position, original, asked }, (ms) => (headMs += ms), signal);
  const total = 2 * H * terms.length;
  let done = 0;
  const report = (layer: number) => input.onProgress?.({ done, total, layer } satisfies SweepProgress);
  report(L);
  const cells: SweepCell[] = [];
  for (const pass of [0, 1]) {
    for (const term of terms) {
      for (let h = 0; h < H; h++) {
        const a = await unlessAborted(model.heads.runEmdEdit(runIds, keepOf(pass, term, h), mode === 'mean', signal), signal);
        forwardMs += a.forwardMs;
        rerunMs += a.passesMs;
        if (!a.hidden.every(Number.isFinite))
          throw new LensError(`${ck.dir}: the EMD without ${L + pass}.${h}:${term} gave non-finite states`, 'runtime');
        const { value, ...rest }: FollowedCell = first(await follow.rate(pickRows(a.hidden, follow.rows, D), 1), 'the variant');
        cells.push({ layer: L + pass, head: h, term, drop: follow.before - value, ...rest });
        done++;
        report(L + pass);
      }
    }
  }
  await nameTokens(model, [followed, ...cells.flatMap((c) => (c.top1_after ? [c.top1_after] : []))], signal);
  const grid = Object.fromEntries(
    terms.map((t) => [
      t,
      [0, 1].map((pass) =>
        Array.from({ length: H }, (_, h) => cells.find((c) => c.term === t && c.layer === L + pass && c.head === h)!.drop),
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
    followed,
    grid,
    ranking: [...cells].sort((a, b) => b.drop - a.drop),
    emd: true,
    timings: { forward_ms: forwardMs, rerun_ms: rerunMs, head_ms: headMs, cells: total, total_ms: performance.now() - t0 },
  };
}
