// `deberta-lens predict`: fill-mask and replaced-token detection as JSON, with the checkpoint's own heads.
import { inputFlags, intList } from './cli-args';
import { type EngineOptions, LensError, openModel, type PredictResult } from './engine';

/** The JSON contract: `predictions` (every [MASK], then --positions masked first) and, with an RTD head, `rtd`. */
export function predictJson(r: PredictResult): object {
  return {
    model: r.model,
    mlm_head: r.mlm_head,
    rtd_head: r.rtd_head,
    mask_id: r.mask_id,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    predictions: r.predictions.map((p) => ({ position: p.position, token: r.tokens[p.position].text, source: p.source, top: p.top, ...(p.original ? { original: p.original } : {}) })),
    ...(r.rtd ? { rtd: r.rtd } : {}),
    timings: r.timings,
  };
}

export async function predictCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  const input = inputFlags(flags);
  const positions = flags.has('positions') ? intList(flags.get('positions')!, 'positions') : undefined;
  let top: number | undefined;
  if (flags.has('top')) {
    top = Number(flags.get('top'));
    if (!Number.isInteger(top) || top < 1) throw new LensError(`--top takes a positive integer, got "${flags.get('top')}"`);
  }
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
