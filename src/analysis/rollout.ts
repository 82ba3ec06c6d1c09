// Attention rollout (Abnar & Zuidema 2020), residual-adjusted: per layer Â = rownorm(0.5·mean_h A_h + 0.5·I),
// then R = Â_last · … · Â_first (R[i,j]: how much of token j's input reaches token i's output).
import { LensError } from '../engine/errors';
import type { ExplainResult } from '../engine/result/explain-result';
import type { TermName } from '../engine/types';
import { ablatedProbs, type AblationPreset } from './ablation';
import { blockCount } from './matrix';
import { layerTerms } from './term-shares';

/** Â for one layer from its `[H,n,n]` probabilities (float64 `[n,n]`). */
export function residualAttention(probs: Float32Array, n: number): Float64Array {
  const H = blockCount(probs, n, 'probs');
  const nn = n * n;
  const a = new Float64Array(nn);
  for (let h = 0; h < H; h++) for (let k = 0; k < nn; k++) a[k]! += probs[h * nn + k]!;
  for (let k = 0; k < nn; k++) a[k] = (0.5 * a[k]!) / H;
  for (let i = 0; i < n; i++) a[i * n + i]! += 0.5;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += a[i * n + j]!;
    if (s > 0) for (let j = 0; j < n; j++) a[i * n + j]! /= s;
  }
  return a;
}

/** R ← Â·R for the next layer's `[H,n,n]` probabilities (R undefined before the first layer). */
function rolloutStep(r: Float64Array | undefined, probs: Float32Array, n: number): Float64Array {
  const a = residualAttention(probs, n);
  if (!r) return a;
  const next = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < n; k++) {
      const aik = a[i * n + k]!;
      if (aik === 0) continue;
      for (let j = 0; j < n; j++) next[i * n + j]! += aik * r[k * n + j]!;
    }
  }
  return next;
}

/** Rollout over per-layer `[H,n,n]` probabilities given first layer first. Returns `[n,n]`. */
export function rollout(perLayerProbs: readonly Float32Array[], n: number): Float32Array {
  if (perLayerProbs.length === 0) throw new LensError('analysis: rollout needs at least one layer');
  let r: Float64Array | undefined;
  for (const probs of perLayerProbs) r = rolloutStep(r, probs, n);
  return Float32Array.from(r!);
}

/**
 * Rollout of a result over its layers (ascending). With `ablation`, each layer's probabilities are first
 * recomputed from the kept terms (see ablation.ts). Rollout is only meaningful over consecutive layers from 0,
 * so a result holding a gap (e.g. `--layers 0,3`) is refused rather than silently rolled over the gap.
 */
export async function rolloutResult(
  result: ExplainResult,
  opts: { ablation?: AblationPreset | readonly TermName[]; upToLayer?: number } = {},
): Promise<Float32Array> {
  const layers = result.layers.filter((l) => opts.upToLayer === undefined || l <= opts.upToLayer);
  layers.forEach((l, idx) => {
    if (l !== idx)
      throw new LensError(
        `analysis: rollout needs layers 0..${layers[layers.length - 1]} without gaps, this result has ${result.layers.join(',')}; explain with --layers all`,
      );
  });
  if (layers.length === 0) throw new LensError('analysis: rollout needs at least one layer');
  // Layer by layer: only the running [n,n] product and the current layer are in memory.
  let r: Float64Array | undefined;
  for (const l of layers) {
    await result.load(l);
    const probs = opts.ablation ? ablatedProbs(layerTerms(result, l), result.n, result.scale, opts.ablation) : result.tensor(l, 'probs');
    r = rolloutStep(r, probs, result.n);
  }
  return Float32Array.from(r!);
}
