// What a patch puts into the corrupted run: comma-separated parts, checked against the model (and, once both texts
// are tokenized, their length) before anything runs.
//   L.H:TERM   head H of layer L, TERM c2c | c2p | p2c (one raw term), all (the whole score), out (the head's context
//              vector before the attention output projection); H = * every head of L; L = * every layer
//   resid:L    the hidden state entering layer L at every position (L = layers: the final hidden state)
//   resid:L@i  the same at position i only
//   knock:L:i->j  the attention edge query i → key j removed in every head of layer L (score −∞ before the softmax)
import { LensError } from '../errors';
import type { ModelSpec } from '../types';
import { modelTerms } from './ablation-spec';

export const PATCH_SITES = ['c2c', 'c2p', 'p2c', 'all', 'out'] as const;
export type PatchSite = (typeof PATCH_SITES)[number];

export interface PatchPlan {
  /** The parts as given, normalised. */
  entries: string[];
  /** Layer → site → heads that take the clean run's value (sorted). */
  heads: Map<number, Partial<Record<PatchSite, number[]>>>;
  /** L (0…layers) → positions whose state entering layer L is the clean run's ('all' = every position). */
  resid: Map<number, number[] | 'all'>;
  /** Layer → edges [query, key] removed in every head. */
  knock: Map<number, [number, number][]>;
  /** Where a rerun starts: the first layer anything is put in or knocked out (layers − 1 for the final state alone;
   *  layers when nothing is). */
  firstLayer: number;
}

const HEAD = /^(\d+|\*)\.(\d+|\*):([a-z0-9]+)$/;
const RESID = /^resid:(\d+)(?:@(\d+))?$/;
const KNOCK = /^knock:(\d+):(\d+)->(\d+)$/;
const FORMS = 'L.H:c2c|c2p|p2c|all|out (H or L may be *), resid:L, resid:L@i or knock:L:i->j';

/** An empty plan: nothing put in (the corrupted run as it is). */
export function emptyPlan(spec: ModelSpec): PatchPlan {
  return { entries: [], heads: new Map(), resid: new Map(), knock: new Map(), firstLayer: spec.numLayers };
}

/**
 * Parses a patch spec. With `n` (the texts' token count) positions are checked too; without it only layers, heads
 * and terms (the CLI's check before a model opens).
 */
export function parsePatch(text: string, spec: ModelSpec, n?: number, flag = '--patch'): PatchPlan {
  const L = spec.numLayers,
    H = spec.numHeads;
  const terms: PatchSite[] = [...modelTerms(spec), 'all', 'out'];
  const plan = emptyPlan(spec);
  const layerCheck = (part: string, l: number, max = L - 1) => {
    if (l > max) throw new LensError(`${flag} "${part}": layer ${l} does not exist; this model has layers 0…${max}`);
  };
  const positionCheck = (part: string, i: number) => {
    if (n !== undefined && i >= n) throw new LensError(`${flag} "${part}": position ${i} does not exist; the texts have tokens 0…${n - 1}`);
  };
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const part of parts) {
    let m: RegExpExecArray | null;
    if ((m = RESID.exec(part))) {
      const l = Number(m[1]);
      layerCheck(part, l, L);
      if (m[2] === undefined) plan.resid.set(l, 'all');
      else {
        const i = Number(m[2]);
        positionCheck(part, i);
        const cur = plan.resid.get(l) ?? [];
        if (cur !== 'all' && !cur.includes(i))
          plan.resid.set(
            l,
            [...cur, i].sort((a, b) => a - b),
          );
      }
    } else if ((m = KNOCK.exec(part))) {
      const l = Number(m[1]);
      layerCheck(part, l);
      const [i, j] = [Number(m[2]), Number(m[3])];
      positionCheck(part, i);
      positionCheck(part, j);
      const cur = plan.knock.get(l) ?? [];
      if (!cur.some(([a, b]) => a === i && b === j)) cur.push([i, j]);
      plan.knock.set(l, cur);
    } else if ((m = HEAD.exec(part))) {
      const site = m[3] as PatchSite;
      if (!(PATCH_SITES as readonly string[]).includes(site))
        throw new LensError(`${flag} "${part}": "${site}" is not a term; use c2c, c2p, p2c, all or out`);
      if (!terms.includes(site))
        throw new LensError(`${flag} "${part}": this model has no ${site} term (its terms: ${modelTerms(spec).join(', ')})`);
      const layers = m[1] === '*' ? Array.from({ length: L }, (_, l) => l) : [Number(m[1])];
      layerCheck(part, layers[0]!);
      const head = m[2] === '*' ? undefined : Number(m[2]);
      if (head !== undefined && head >= H)
        throw new LensError(`${flag} "${part}": head ${head} does not exist; this model has heads 0…${H - 1} in every layer`);
      for (const l of layers) {
        const bySite = plan.heads.get(l) ?? {};
        const set = new Set(bySite[site] ?? []);
        for (const h of head === undefined ? Array.from({ length: H }, (_, k) => k) : [head]) set.add(h);
        bySite[site] = [...set].sort((a, b) => a - b);
        plan.heads.set(l, bySite);
      }
    } else throw new LensError(`${flag} "${part}" is not ${FORMS}`);
    plan.entries.push(part);
  }
  plan.firstLayer = firstLayer(plan, L);
  return plan;
}

/** The first layer a rerun of the plan must start from (see PatchPlan.firstLayer). */
export function firstLayer(plan: Pick<PatchPlan, 'heads' | 'resid' | 'knock'>, numLayers: number): number {
  const starts = [...plan.heads.keys(), ...plan.knock.keys(), ...[...plan.resid.keys()].map((l) => Math.min(l, numLayers - 1))];
  return starts.length === 0 ? numLayers : Math.min(...starts);
}

/** A plan of one part built directly (the traces' cells): one head's site, or one position's state. */
export function cellPlan(spec: ModelSpec, cell: { layer: number; head: number; site: PatchSite } | { resid: number; position: number }) {
  const plan = emptyPlan(spec);
  if ('resid' in cell) {
    plan.resid.set(cell.resid, [cell.position]);
    plan.entries.push(`resid:${cell.resid}@${cell.position}`);
  } else {
    plan.heads.set(cell.layer, { [cell.site]: [cell.head] });
    plan.entries.push(`${cell.layer}.${cell.head}:${cell.site}`);
  }
  plan.firstLayer = firstLayer(plan, spec.numLayers);
  return plan;
}
