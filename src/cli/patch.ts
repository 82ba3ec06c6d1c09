// `deberta-lens patch`: what carries a decision — the corrupted text rerun with pieces of the clean run put in
// (--patch SPEC), or a grid of such patches (--trace heads|resid), as JSON.
import { positionFlag } from './args';
import { checkPatch, type EngineOptions, LensError, openModel, type PatchResult, type PatchTrace } from '../engine';
import { predictJson, targetFlag } from './predict';

/** The JSON contract: `clean`, `corrupt` (and `patched`), each what predict prints; `target`, the raw values and
 *  `restored` = (patched − corrupt) / (clean − corrupt); or, for a trace, `grid` with its axes named. */
export function patchJson(r: PatchResult): object {
  const tokens = (ts: PatchResult['tokens']) =>
    ts.map((t, i) => ({ position: i, id: t.id, token: t.text, start: t.start, end: t.end, special: t.special }));
  return {
    model: r.model,
    input_ids: r.input_ids,
    corrupt_ids: r.corrupt_ids,
    tokens: tokens(r.tokens),
    corrupt_tokens: tokens(r.corrupt_tokens),
    // Clean positions whose token the corrupted text changes (or, of another length, does not keep).
    differing_positions: r.input_ids.flatMap((id, i) => {
      const j = r.paired ? r.paired[i] : i;
      return j === null || j === undefined || id !== r.corrupt_ids[j] ? [i] : [];
    }),
    ...(r.paired ? { paired: r.paired } : {}),
    target: r.target,
    values: { clean: r.clean_value, corrupt: r.corrupt_value, ...(r.patch ? { patched: r.patch.value } : {}) },
    ...(r.patch ? { patch: { entries: r.patch.entries, first_layer: r.patch.first_layer }, restored: r.patch.restored } : {}),
    ...(r.grid ? { grid: r.grid } : {}),
    clean: predictJson(r.clean),
    corrupt: predictJson(r.corrupt),
    ...(r.patched ? { patched: predictJson(r.patched) } : {}),
    timings: r.timings,
  };
}

function traceFlag(text: string | undefined): PatchTrace | undefined {
  if (text === undefined) return undefined;
  if (text === 'heads' || text === 'resid' || text === 'flow') return text;
  throw new LensError(`--trace takes heads (layer × head per term), resid (layer × position) or flow (attention edges), got "${text}"`);
}

export async function patchCommand(flags: Map<string, string>, engine: EngineOptions, modelDir: string): Promise<void> {
  const text = flags.get('text');
  // Only the pair corrupted (a multiple-choice head's choice, an NLI hypothesis): the text stays as it is.
  const corrupt = flags.get('corrupt') ?? (flags.has('corrupt-pair') ? text : undefined);
  const trace = traceFlag(flags.get('trace'));
  // The flow knocks edges out of the clean run: the corrupted text only sets the default threshold there.
  if (text === undefined || (corrupt === undefined && trace !== 'flow'))
    throw new LensError(
      'patch needs the clean text and a corrupted one: --text CLEAN --corrupt CORRUPT (or, with --pair, --corrupt-pair P2)',
    );
  if (flags.has('corrupt-pair') && !flags.has('pair')) throw new LensError("--corrupt-pair goes with --pair (the clean text's pair)");
  let threshold: number | undefined;
  if (flags.has('threshold')) {
    if (trace !== 'flow') throw new LensError('--threshold belongs to --trace flow');
    threshold = Number(flags.get('threshold'));
    if (!(Number.isFinite(threshold) && threshold >= 0))
      throw new LensError(`--threshold takes a number ≥ 0, got "${flags.get('threshold')}"`);
  }
  const patch = flags.get('patch');
  if (patch === undefined && trace === undefined)
    throw new LensError('give --patch SPEC[,SPEC…] (e.g. 1.0:c2p, 3.*:all, resid:4@2) or --trace heads|resid|flow');
  if (patch !== undefined && trace !== undefined) throw new LensError('--patch and --trace are two different runs: give one of them');
  const target = flags.has('target') ? targetFlag(flags.get('target')!) : undefined;
  const position = positionFlag(flags);
  // Checked against the config before any graph is built or run.
  await checkPatch(modelDir, patch, target);
  const model = await openModel(modelDir, engine);
  let shown = -1;
  const onProgress = flags.has('verbose')
    ? ({ done, total, layer }: { done: number; total: number; layer: number }) => {
        const pct = Math.floor((100 * done) / total);
        if (pct < shown + 10 && done < total) return;
        process.stderr.write(`patch: ${done}/${total} cells (layer ${layer})\n`);
        shown = pct;
      }
    : undefined;
  const pair = flags.get('pair');
  const corruptPair = flags.get('corrupt-pair') ?? pair;
  try {
    const r = await model.patch({
      text,
      ...(corrupt !== undefined ? { corrupt } : {}),
      ...(pair !== undefined ? { pair, ...(corrupt !== undefined ? { corruptPair } : {}) } : {}),
      ...(threshold !== undefined ? { threshold } : {}),
      ...(patch !== undefined ? { patch } : {}),
      ...(trace ? { trace } : {}),
      target,
      position,
      batch: !flags.has('no-batch'),
      onProgress,
    });
    process.stdout.write(`${JSON.stringify(patchJson(r), null, 1)}\n`);
  } finally {
    await model.dispose();
  }
}
