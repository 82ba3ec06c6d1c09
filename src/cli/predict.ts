// `deberta-lens predict`: fill-mask and replaced-token detection as JSON, with the checkpoint's own heads;
// `deberta-lens ablate`: the same predictions before and after removing attention terms of chosen heads, and
// with --sweep the heads ranked by what removing each one's term costs the followed token.
import { inputFlags, intList, positionFlag } from './args';
import { at } from '../shared/checked';
import {
  type SweepTarget,
  type AblateResult,
  checkAblation,
  checkSweep,
  type EngineOptions,
  LensError,
  openModel,
  type PositionPrediction,
  type PredictResult,
  type SweepResult,
  type TaskOutput,
} from '../engine';

/** The task head's own field (classification, token_classification, question_answering or multiple_choice). */
function taskJson(o: TaskOutput): object {
  return {
    ...(o.classification ? { classification: o.classification } : {}),
    ...(o.token_classification ? { token_classification: o.token_classification } : {}),
    ...(o.question_answering ? { question_answering: o.question_answering } : {}),
    ...(o.multiple_choice ? { multiple_choice: o.multiple_choice } : {}),
  };
}

/** The JSON contract: `task`, `input_ids`, `predictions` (every [MASK], then --positions masked first), with an RTD
 *  head `rtd`, and with a task head its output (taskJson). */
export function predictJson(r: PredictResult): object {
  return {
    task: r.task,
    model: r.model,
    mlm_head: r.mlm_head,
    rtd_head: r.rtd_head,
    mask_id: r.mask_id,
    decoder: r.decoder,
    ...(r.decoder_note ? { decoder_note: r.decoder_note } : {}),
    input_ids: r.input_ids,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    predictions: predictionsJson(r, r.predictions),
    ...(r.rtd ? { rtd: r.rtd } : {}),
    ...taskJson(r),
    timings: r.timings,
  };
}

/** The `predictions` array of predict, and of ablate's `before` and `after`. */
function predictionsJson(r: Pick<PredictResult, 'tokens'>, ps: PositionPrediction[]): object[] {
  return ps.map((p) => ({
    position: p.position,
    token: at(r.tokens, p.position, 'position').text,
    source: p.source,
    top: p.top,
    ...(p.original ? { original: p.original } : {}),
  }));
}

/** The JSON contract: `before` and `after` (each predict's `predictions`), `kl` per position, and `tracked`. */
export function ablateJson(r: AblateResult): object {
  if (r.task && r.task_before && r.task_after) {
    // A task head: before and after each hold the head's output, as predict prints it.
    return {
      task: r.task,
      model: r.model,
      ablation: r.ablation,
      input_ids: r.input_ids,
      tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
      before: taskJson(r.task_before),
      after: taskJson(r.task_after),
      timings: r.timings,
    };
  }
  return {
    model: r.model,
    ablation: r.ablation,
    mask_id: r.mask_id,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    before: predictionsJson(r, r.before),
    after: predictionsJson(r, r.after),
    kl: r.kl,
    tracked: r.tracked,
    timings: r.timings,
  };
}

/** --text/--file/--ids, --pair, --choices, --positions and --top, shared by predict and ablate. */
function predictFlags(flags: Map<string, string>) {
  const input = inputFlags(flags);
  if (flags.has('pair') && input.ids) throw new LensError('--pair goes with --text or --file: ids are fed as given');
  if (flags.has('choices') && input.ids) throw new LensError('--choices goes with --text (the prompt): ids are fed as given');
  const pair = flags.get('pair');
  const choices = flags.has('choices')
    ? flags
        .get('choices')!
        .split('|')
        .map((c) => c.trim())
    : undefined;
  if (choices && choices.some((c) => c.length === 0))
    throw new LensError(`--choices takes choices separated by |, none empty, got "${flags.get('choices')}"`);
  const positions = flags.has('positions') ? intList(flags.get('positions')!, 'positions') : undefined;
  let top: number | undefined;
  if (flags.has('top')) {
    top = Number(flags.get('top'));
    if (!Number.isInteger(top) || top < 1) throw new LensError(`--top takes a positive integer, got "${flags.get('top')}"`);
  }
  return { ...input, ...(pair !== undefined ? { pair } : {}), ...(choices ? { choices } : {}), positions, top };
}

/** The head ranking's JSON: `grid` (per term, the drop as [layers][heads]) and `ranking` (every cell, largest drop first). */
export function sweepJson(r: SweepResult): object {
  return {
    model: r.model,
    mode: r.mode,
    terms: r.terms,
    position: r.position,
    token: at(r.tokens, r.position, 'position').text,
    source: r.source,
    ...(r.followed ? { followed: r.followed } : {}),
    ...(r.task ? { task: r.task, target: r.target } : {}),
    grid: r.grid,
    ranking: r.ranking,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    timings: r.timings,
  };
}

/** --target label:NAME, label:ID or token:ID; its fit to the checkpoint's head is the engine's to check. */
export function targetFlag(text: string): SweepTarget {
  const m = /^(label|token):(.+)$/.exec(text);
  if (m?.[1] === 'label' && m[2]!.trim().length > 0) return { label: m[2]!.trim() };
  if (m?.[1] === 'token' && /^\d+$/.test(m[2]!.trim())) return { token: Number(m[2]!.trim()) };
  throw new LensError(`--target takes label:NAME, label:ID (a classification head) or token:ID (a masked-LM head), got "${text}"`);
}

/** `ablate --sweep c2p|p2c|c2c|all [--position i] [--target …]`: every head's term removed alone, heads ranked. */
async function sweepCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  if (flags.has('ablate')) throw new LensError('--sweep and --ablate are two different runs: give one of them');
  for (const f of ['positions', 'top'])
    if (flags.has(f)) throw new LensError(`--${f} does not apply to --sweep: name the one position followed with --position i`);
  const input = inputFlags(flags);
  if (flags.has('pair') && input.ids) throw new LensError('--pair goes with --text or --file: ids are fed as given');
  if (flags.has('choices')) throw new LensError('--sweep does not rank multiple-choice heads yet: use --ablate');
  const target = flags.has('target') ? targetFlag(flags.get('target')!) : undefined;
  const pair = flags.get('pair');
  const position = positionFlag(flags);
  const mode = flags.has('mean') ? 'mean' : 'zero';
  // Checked against the config before any graph is built or run.
  const terms = await checkSweep(
    modelDir,
    flags
      .get('sweep')!
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
    target,
  );
  const model = await openModel(modelDir, engine);
  const verbose = flags.has('verbose');
  let shown = -1;
  const onProgress = verbose
    ? ({ done, total, layer }: { done: number; total: number; layer: number }) => {
        const pct = Math.floor((100 * done) / total);
        if (pct < shown + 10 && done < total) return;
        process.stderr.write(`sweep: ${done}/${total} cells (layer ${layer})\n`);
        shown = pct;
      }
    : undefined;
  try {
    process.stdout.write(
      `${JSON.stringify(sweepJson(await model.sweep({ ...input, pair, terms, position, target, mode, onProgress })), null, 1)}\n`,
    );
  } finally {
    await model.dispose();
  }
}

export async function ablateCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  if (flags.has('sweep')) return sweepCommand(flags, engine, modelDir);
  if (flags.has('position')) throw new LensError('--position belongs to --sweep; an intervention takes --positions 3,7');
  if (flags.has('target')) throw new LensError('--target belongs to --sweep (what the ranking follows)');
  const input = predictFlags(flags);
  if (!flags.has('ablate')) throw new LensError('--ablate is required: LAYER.HEAD:TERM entries such as 1.0:c2p, 4.*:p2c or 2.3:all');
  const ablate = flags.get('ablate')!;
  const mode = flags.has('mean') ? 'mean' : 'zero';
  // Checked against the config before any graph is built or run.
  await checkAblation(modelDir, ablate, mode);
  const model = await openModel(modelDir, engine);
  try {
    process.stdout.write(`${JSON.stringify(ablateJson(await model.ablate({ ...input, ablate, mode })), null, 1)}\n`);
  } finally {
    await model.dispose();
  }
}

export async function predictCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  const { positions, top, ...input } = predictFlags(flags);
  const model = await openModel(modelDir, engine);
  try {
    const result = await model.predict({ ...input, positions, top, emd: !flags.has('no-emd') });
    // Why the Enhanced Mask Decoder could not run (the plain head answered): one line beside the JSON.
    if (result.decoder === 'plain' && result.decoder_note) process.stderr.write(`deberta-lens: ${result.decoder_note}\n`);
    if (result.task === 'replaced-token-detection' && result.predictions.length === 0) {
      process.stderr.write(
        'deberta-lens: this checkpoint has no masked-LM head (cls.predictions.* or lm_predictions.lm_head.*): only replaced-token detection is shown\n',
      );
    }
    process.stdout.write(`${JSON.stringify(predictJson(result), null, 1)}\n`);
  } finally {
    await model.dispose();
  }
}
