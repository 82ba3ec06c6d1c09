// Term ablation: the softmax the model would produce from a chosen subset of its stored terms, with the real
// scale and the real masking, and how far that is from the real probabilities.
//
// score' = Σ_{t ∈ kept} t / scale, probs' = masked_softmax(score') over keys (deberta-spec.md §5.7, current HF:
// masked keys 0, padding query rows uniform). The scale is NOT recomputed for the subset: we ask "what if this
// term contributed nothing", not "what if the model had been built without it".
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import type { TermName } from '../engine/types';
import { blockCount, maskedSoftmaxRow, sameLength } from './matrix';
import { layerTerms, type TermSet } from './term-shares';

export type AblationPreset = 'all' | 'content-only' | 'position-only' | 'no-c2c' | 'no-c2p' | 'no-p2c';

const PRESETS: Record<AblationPreset, TermName[]> = {
  all: ['c2c', 'c2p', 'p2c'],
  'content-only': ['c2c'],
  'position-only': ['c2p', 'p2c'],
  'no-c2c': ['c2p', 'p2c'],
  'no-c2p': ['c2c', 'p2c'],
  'no-p2c': ['c2c', 'c2p'],
};

/**
 * The terms to keep. A preset keeps whichever of its terms the model has ('no-p2c' on a c2p-only model keeps
 * c2c+c2p); an explicit list must name only terms the model has, or it is an error.
 */
export function keptTerms(keep: AblationPreset | readonly TermName[], available: readonly TermName[]): TermName[] {
  if (typeof keep === 'string') {
    if (!(keep in PRESETS)) throw new LensError(`analysis: unknown ablation '${keep}'; use one of ${Object.keys(PRESETS).join(', ')}`);
    const kept = PRESETS[keep].filter((t) => available.includes(t));
    if (kept.length === 0) throw new LensError(`analysis: ablation '${keep}' keeps no term of this model (it has ${available.join(', ')})`);
    return kept;
  }
  for (const t of keep) {
    if (!available.includes(t))
      throw new LensError(`analysis: this model has no ${t} term (it has ${available.join(', ')}); leave it out of the ablation`);
  }
  return [...new Set(keep)];
}

/** Optional masking, per token (1 = real, 0 = padding). Default: every token real (explain() never pads). */
export interface MaskOptions {
  attentionMask?: ArrayLike<number>;
}

function termsPresent(terms: TermSet): TermName[] {
  return (['c2c', 'c2p', 'p2c'] as const).filter((t) => terms[t] !== undefined);
}

/** Pre-softmax scores from the kept terms, `[H,n,n]` float64 (kept in float64 for the log-probs below). */
function ablatedScores(terms: TermSet, kept: TermName[], scale: number): Float64Array {
  const mats = kept.map((t) => terms[t]!);
  sameLength([terms.c2c, ...mats], 'term matrices');
  const out = new Float64Array(terms.c2c.length);
  for (const m of mats) for (let k = 0; k < out.length; k++) out[k]! += m[k]!;
  for (let k = 0; k < out.length; k++) out[k]! /= scale;
  return out;
}

function checkScale(scale: number): void {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new LensError(`analysis: scale must be a positive number, got ${scale}`);
}

/** Softmax over keys of the kept terms, `[H,n,n]` like the input. */
export function ablatedProbs(
  terms: TermSet,
  n: number,
  scale: number,
  keep: AblationPreset | readonly TermName[],
  opts: MaskOptions = {},
): Float32Array {
  return ablateWithLogZ(terms, n, scale, keep, opts).probs;
}

function ablateWithLogZ(terms: TermSet, n: number, scale: number, keep: AblationPreset | readonly TermName[], opts: MaskOptions) {
  const rows = blockCount(terms.c2c, n, 'c2c') * n;
  checkScale(scale);
  const mask = opts.attentionMask;
  if (mask && mask.length !== n) throw new LensError(`analysis: attentionMask has ${mask.length} entries for ${n} tokens`);
  const scores = ablatedScores(terms, keptTerms(keep, termsPresent(terms)), scale);
  const probs = new Float32Array(scores.length);
  const logZ = new Float64Array(rows);
  for (let r = 0; r < rows; r++) logZ[r] = maskedSoftmaxRow(scores, r * n, n, probs, mask, !mask || !!mask[r % n]);
  return { probs, scores, logZ };
}

export interface AblationResult {
  kept: TermName[];
  /** `[H,n,n]` ablated probabilities. */
  probs: Float32Array;
  /** `[H,n,n]` ablated − real. */
  diff: Float32Array;
  /** `[H,n]` KL(real ‖ ablated) per query row, in nats. */
  kl: Float32Array;
  /** `[H,n]` total variation ½ Σ_j |real − ablated| per query row (0 … 1). */
  tv: Float32Array;
}

/**
 * Ablation against given real probabilities. KL uses the ablated log-probabilities straight from the scores
 * (score − log Σ exp), so a key the ablation pushes to float32 zero still gives a finite KL. Masked keys
 * (0 in both) contribute nothing.
 */
export function ablateTerms(
  terms: TermSet,
  realProbs: Float32Array,
  n: number,
  scale: number,
  keep: AblationPreset | readonly TermName[],
  opts: MaskOptions = {},
): AblationResult {
  sameLength([terms.c2c, realProbs], 'terms and probs');
  const kept = keptTerms(keep, termsPresent(terms));
  const { probs, scores, logZ } = ablateWithLogZ(terms, n, scale, kept, opts);
  const rows = logZ.length;
  const diff = new Float32Array(probs.length);
  const kl = new Float32Array(rows);
  const tv = new Float32Array(rows);
  const mask = opts.attentionMask;
  for (let r = 0; r < rows; r++) {
    const padRow = !!mask && !mask[r % n];
    let klr = 0;
    let tvr = 0;
    for (let j = 0; j < n; j++) {
      const k = r * n + j;
      const p = realProbs[k]!;
      diff[k] = probs[k]! - p;
      tvr += Math.abs(probs[k]! - p);
      if (p > 0) {
        // A padding row is uniform in both, and a masked key is 0 in both: use the ablated value's own log there.
        const logQ = padRow || (mask && !mask[j]) ? Math.log(Math.max(probs[k]!, Number.MIN_VALUE)) : scores[k]! - logZ[r]!;
        klr += p * (Math.log(p) - logQ);
      }
    }
    kl[r] = Math.max(klr, 0); // float rounding can dip a hair below 0 for identical rows
    tv[r] = tvr / 2;
  }
  return { kept, probs, diff, kl, tv };
}

/** Ablation of one layer of a result (all heads). */
export async function ablateLayer(
  result: ExplainResult,
  layer: number,
  keep: AblationPreset | readonly TermName[],
  opts: MaskOptions = {},
): Promise<AblationResult> {
  await result.load(layer);
  return ablateTerms(layerTerms(result, layer), result.tensor(layer, 'probs'), result.n, result.scale, keep, opts);
}
