// Which attention terms an intervention removes: "LAYER.HEAD:TERM" entries, comma-separated, e.g.
// "1.0:c2p,4.*:p2c,2.3:all" (head * = every head of the layer; term all = the head's every term), checked against
// the model before anything runs.
import type { AblateResult, AblationMode } from '../api';
import { LensError } from '../errors';
import type { ModelSpec, TermName } from '../types';

export interface AblationPlan {
  mode: AblationMode;
  /** Layer → term → heads removed (sorted). Layers without an entry run untouched. */
  layers: Map<number, Partial<Record<TermName, number[]>>>;
  /** The first layer a rerun must start from. */
  firstLayer: number;
  /** The entries as given, normalised ("1.0:c2p", "4.*:p2c"). */
  entries: string[];
}

/** What `ablate` reports of a plan: the entries, the mode and how many layers the rerun covers (an intervention in
 *  the Enhanced Mask Decoder reruns its passes from the first one it touches: layers L and L + 1 are the passes). */
export function planSummary(plan: AblationPlan, numLayers: number): AblateResult['ablation'] {
  const emd = plan.firstLayer >= numLayers;
  return {
    entries: plan.entries,
    mode: plan.mode,
    first_layer: plan.firstLayer,
    layers_rerun: (emd ? numLayers + 2 : numLayers) - plan.firstLayer,
    layers: numLayers,
  };
}

/** Whether a plan removes terms in the Enhanced Mask Decoder's passes (layers numLayers and numLayers + 1). */
export function touchesEmd(plan: AblationPlan, numLayers: number): boolean {
  return [...plan.layers.keys()].some((l) => l >= numLayers);
}

/** The EMD passes' keep multipliers per term, `[2 · heads]` pass-major (1 keeps a term, 0 removes it). */
export function emdKeep(plan: AblationPlan, spec: ModelSpec): Record<TermName, Float32Array> {
  const out = {} as Record<TermName, Float32Array>;
  for (const t of modelTerms(spec)) {
    const keep = new Float32Array(2 * spec.numHeads).fill(1);
    for (const pass of [0, 1]) for (const h of plan.layers.get(spec.numLayers + pass)?.[t] ?? []) keep[pass * spec.numHeads + h] = 0;
    out[t] = keep;
  }
  return out;
}

const ENTRY = /^(\d+)\.(\d+|\*):(c2c|c2p|p2c|all)$/;

/** The terms a model computes: c2c always, c2p / p2c as its config says. */
export function modelTerms(spec: ModelSpec): TermName[] {
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  return ['c2c', ...(relative ? (['c2p', 'p2c'] as const).filter((t) => spec.posAttType.includes(t)) : [])];
}

/**
 * `emdPasses`: 2 where the model decodes through the Enhanced Mask Decoder's passes, whose layers are then numLayers
 * ("EMD 1") and numLayers + 1 ("EMD 2"); those entries may not be mixed with the encoder's.
 */
export function parseAblation(text: string, spec: ModelSpec, mode: AblationMode = 'zero', flag = '--ablate', emdPasses = 0): AblationPlan {
  const terms = modelTerms(spec);
  const L = spec.numLayers,
    H = spec.numHeads;
  const layers = new Map<number, Partial<Record<TermName, Set<number>>>>();
  const entries: string[] = [];
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (parts.length === 0) throw new LensError(`${flag} is empty: give LAYER.HEAD:TERM entries such as 1.0:c2p, 4.*:p2c or 2.3:all`);
  for (const part of parts) {
    const m = ENTRY.exec(part);
    if (!m)
      throw new LensError(`${flag} entry "${part}" is not LAYER.HEAD:TERM (e.g. 1.0:c2p, 4.*:p2c, 2.3:all; TERM is c2c, c2p, p2c or all)`);
    const layer = Number(m[1]);
    if (layer >= L + emdPasses)
      throw new LensError(
        `${flag} entry "${part}": layer ${layer} does not exist; this model has layers 0…${L - 1}` +
          (emdPasses ? ` and the Enhanced Mask Decoder's passes ${L} (EMD 1) and ${L + 1} (EMD 2)` : ''),
      );
    const head = m[2] === '*' ? undefined : Number(m[2]);
    if (head !== undefined && head >= H)
      throw new LensError(`${flag} entry "${part}": head ${head} does not exist; this model has heads 0…${H - 1} in every layer`);
    const heads = head === undefined ? Array.from({ length: H }, (_, h) => h) : [head];
    const term = m[3] as TermName | 'all';
    if (term !== 'all' && !terms.includes(term)) {
      throw new LensError(`${flag} entry "${part}": this model has no ${term} term (its terms: ${terms.join(', ')})`);
    }
    const byTerm = layers.get(layer) ?? {};
    for (const t of term === 'all' ? terms : [term]) {
      const set = (byTerm[t] ??= new Set());
      for (const h of heads) set.add(h);
    }
    layers.set(layer, byTerm);
    entries.push(`${layer}.${m[2]}:${term}`);
  }
  const emd = [...layers.keys()].filter((l) => l >= L);
  if (emd.length > 0 && emd.length < layers.size)
    throw new LensError(
      `${flag}: entries in the Enhanced Mask Decoder's passes (layers ${L} and ${L + 1}) cannot be mixed with the encoder's layers yet; remove one kind`,
    );
  const sorted = new Map(
    [...layers.entries()]
      .sort(([a], [b]) => a - b)
      .map(([l, byTerm]) => [l, Object.fromEntries(Object.entries(byTerm).map(([t, s]) => [t, [...s].sort((a, b) => a - b)]))]),
  );
  return { mode, layers: sorted, firstLayer: Math.min(...layers.keys()), entries };
}

/** Per-head multipliers of one layer's terms for the layer graph: 1 keeps a term, 0 removes it. */
export function keepMasks(plan: AblationPlan, layer: number, spec: ModelSpec): Record<TermName, Float32Array> {
  const out = {} as Record<TermName, Float32Array>;
  for (const t of ['c2c', 'c2p', 'p2c'] as const) {
    const keep = new Float32Array(spec.numHeads).fill(1);
    for (const h of plan.layers.get(layer)?.[t] ?? []) keep[h] = 0;
    out[t] = keep;
  }
  return out;
}
