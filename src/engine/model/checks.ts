// The CLI's first step for an intervention or a sweep: the spec checked against a model's config alone (no graph
// built, nothing run), so a typo is reported before a model opens.
import type { AblationMode, SweepTarget } from '../api';
import { loadCheckpoint } from '../checkpoint';
import { emdPlan } from '../checkpoint/emd';
import { findHeads } from '../checkpoint/heads';
import { modelTerms, parseAblation } from '../run/ablation-spec';
import { requireMlmHead } from '../run/prediction-read';
import { sweepTerms } from '../run/sweep';
import { checkSweepTarget } from '../run/sweep-target';
import { parsePatch } from '../run/patch-spec';
import { checkPatchTarget } from '../run/patch-target';
import type { TermName } from '../types';
import { resolveModelDir } from './model-dir';

/** An intervention spec's entries, normalised; rejects what the model lacks (a term, a layer, a head to show the effect on). */
export async function checkAblation(modelDir: string, spec: string, mode: AblationMode = 'zero'): Promise<string[]> {
  const ck = await loadCheckpoint(resolveModelDir(modelDir), { hash: false });
  // Layers L and L + 1 are the Enhanced Mask Decoder's passes where the checkpoint decodes through them.
  const heads = findHeads(ck);
  const emd = heads.mlm && emdPlan(ck, heads).kind === 'passes' ? 2 : 0;
  const entries = parseAblation(spec, ck.spec, mode, '--ablate', emd).entries;
  requireMlmHead(ck, true);
  return entries;
}

/** A sweep's terms, checked against the model's. */
export async function checkSweep(modelDir: string, terms: string[], target?: SweepTarget): Promise<TermName[]> {
  const ck = await loadCheckpoint(resolveModelDir(modelDir), { hash: false });
  const out = sweepTerms(terms, modelTerms(ck.spec));
  checkSweepTarget(ck, target); // a task head ranks by its target instead of a token (run/sweep-target.ts)
  return out;
}

/** A patch spec's parts (layers, heads, terms; positions are checked once the texts are tokenized) and the target. */
export async function checkPatch(modelDir: string, spec: string | undefined, target?: SweepTarget): Promise<void> {
  const ck = await loadCheckpoint(resolveModelDir(modelDir), { hash: false });
  checkPatchTarget(ck, target);
  if (spec !== undefined) parsePatch(spec, ck.spec);
}
