// `deberta-lens predict`: fill-mask and replaced-token detection as JSON, with the checkpoint's own heads;
// `deberta-lens ablate`: the same predictions before and after removing attention terms of chosen heads.
import { inputFlags, intList } from './cli-args';
import { type AblateResult, checkAblation, type EngineOptions, LensError, openModel, type PositionPrediction, type PredictResult } from './engine';

/** The JSON contract: `predictions` (every [MASK], then --positions masked first) and, with an RTD head, `rtd`. */
export function predictJson(r: PredictResult): object {
  return {
    model: r.model,
    mlm_head: r.mlm_head,
    rtd_head: r.rtd_head,
    mask_id: r.mask_id,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    predictions: predictionsJson(r, r.predictions),
    ...(r.rtd ? { rtd: r.rtd } : {}),
    timings: r.timings,
  };
}

/** The `predictions` array of predict, and of ablate's `before` and `after`. */
function predictionsJson(r: Pick<PredictResult, 'tokens'>, ps: PositionPrediction[]): object[] {
  return ps.map((p) => ({ position: p.position, token: r.tokens[p.position].text, source: p.source, top: p.top, ...(p.original ? { original: p.original } : {}) }));
}

/** The JSON contract: `before` and `after` (each predict's `predictions`), `kl` per position, and `tracked`. */
export function ablateJson(r: AblateResult): object {
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

/** --text/--file/--ids, --positions and --top, shared by predict and ablate. */
function predictFlags(flags: Map<string, string>) {
  const input = inputFlags(flags);
  const positions = flags.has('positions') ? intList(flags.get('positions')!, 'positions') : undefined;
  let top: number | undefined;
  if (flags.has('top')) {
    top = Number(flags.get('top'));
    if (!Number.isInteger(top) || top < 1) throw new LensError(`--top takes a positive integer, got "${flags.get('top')}"`);
  }
  return { ...input, positions, top };
}

export async function ablateCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
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
    const result = await model.predict({ ...input, positions, top });
    if (!result.mlm_head && result.predictions.length === 0) {
      process.stderr.write('deberta-lens: this checkpoint has no masked-LM head (cls.predictions.* or lm_predictions.lm_head.*): only replaced-token detection is shown\n');
    }
    process.stdout.write(`${JSON.stringify(predictJson(result), null, 1)}\n`);
  } finally {
    await model.dispose();
  }
}
