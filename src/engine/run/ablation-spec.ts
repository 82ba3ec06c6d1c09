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

/** What `ablate` reports of a plan: the entries, the mode and how many layers the rerun covers. */
export function planSummary(plan: AblationPlan, numLayers: number): AblateResult['ablation'] {
  return {
    entries: plan.entries,
    mode: plan.mode,
    first_layer: plan.firstLayer,
    layers_rerun: numLayers - plan.firstLayer,
    layers: numLayers,
  };
}

const ENTRY = /^(\d+)\.(\d+|\*):(c2c|c2p|p2c|all)$/;

/** The terms a model computes: c2c always, c2p / p2c as its config says. */
export function modelTerms(spec: ModelSpec): TermName[] {
  const relative = spec.relativeAttention && spec.posAttType.length > 0;
  return ['c2c', ...(relative ? (['c2p', 'p2c'] as const).filter((t) => spec.posAttType.includes(t)) : [])];
}

export function parseAblation(text: string, spec: ModelSpec, mode: AblationMode = 'zero', flag = '--ablate'): AblationPlan {
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
    if (layer >= L) throw new LensError(`${flag} entry "${part}": layer ${layer} does not exist; this model has layers 0…${L - 1}`);
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
