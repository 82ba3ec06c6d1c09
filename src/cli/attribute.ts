// `deberta-lens attribute`: which tokens the decision rests on, by occlusion — each token masked or removed alone,
// scored by the drop in the followed value (a label's logit, a QA span, a masked token's log-probability).
import { inputFlags } from './args';
import { type EngineOptions, LensError, type OcclusionMethod, type OcclusionResult, openModel } from '../engine';
import { targetFlag } from './predict';
import { groupWords, type MergeMode } from '../analysis/words';

/** The JSON contract: task, input_ids, tokens, target, before, methods.{mask,remove}.{scores,after}, timings; with
 *  --words or --identifiers, `groups` (each word's positions; every position of a word holds the word's score). */
export function attributeJson(r: OcclusionResult): object {
  return {
    task: r.task,
    model: r.model,
    mask_id: r.mask_id,
    input_ids: r.input_ids,
    tokens: r.tokens.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special })),
    target: r.target,
    before: r.before,
    methods: r.methods,
    ...(r.groups ? { groups: r.groups } : {}),
    ...(r.notes ? { notes: r.notes } : {}),
    timings: r.timings,
  };
}

function methodFlag(text: string | undefined): OcclusionMethod[] | undefined {
  if (text === undefined) return undefined;
  if (text === 'both') return ['mask', 'remove'];
  if (text === 'mask' || text === 'remove') return [text];
  throw new LensError(`--method takes mask, remove or both, got "${text}"`);
}

/** `--words` / `--identifiers`: each word (the panel's merge, prose or code) taken out whole instead of each token. */
function wordsFlag(flags: Map<string, string>): MergeMode | undefined {
  if (flags.has('words') && flags.has('identifiers'))
    throw new LensError('--words and --identifiers are two ways to join pieces: give one');
  return flags.has('identifiers') ? 'identifiers' : flags.has('words') ? 'words' : undefined;
}

export async function attributeCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  const input = inputFlags(flags);
  if (flags.has('pair') && input.ids) throw new LensError('--pair goes with --text or --file: ids are fed as given');
  const target = flags.has('target') ? targetFlag(flags.get('target')!) : undefined;
  let position: number | undefined;
  if (flags.has('position')) {
    position = Number(flags.get('position'));
    if (!Number.isInteger(position) || position < 0)
      throw new LensError(`--position takes a token index (0 = [CLS]), got "${flags.get('position')}"`);
  }
  const methods = methodFlag(flags.get('method'));
  const words = wordsFlag(flags);
  // A pair's offsets are its own text's: the pieces' own text decides the word breaks there.
  const text = flags.has('pair') ? undefined : input.text;
  const model = await openModel(modelDir, engine);
  const onProgress = flags.has('verbose')
    ? ({ done, total, method }: { done: number; total: number; method: string }) =>
        process.stderr.write(`attribute: ${done}/${total} variants (${method})\n`)
    : undefined;
  try {
    const r = await model.occlude({
      ...input,
      pair: flags.get('pair'),
      target,
      position,
      methods,
      ...(words ? { groups: (tokens) => groupWords(tokens, text, words).map((g) => g.pieces) } : {}),
      batch: !flags.has('no-batch'),
      onProgress,
    });
    process.stdout.write(`${JSON.stringify(attributeJson(r), null, 1)}\n`);
  } finally {
    await model.dispose();
  }
}
