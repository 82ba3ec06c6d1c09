// The information flow to the target: attention edges knocked out one at a time on the clean run (score −∞ for query i,
// key j in every head of layer L, rerun from L), walking back from the rows the target reads. At the last layer every
// edge into those rows is tried; an edge that moves the target by more than the threshold is kept and its key joins
// the rows whose edges are tried one layer down (a row stays once reached: the residual stream carries it). Each kept
// edge is named by the term (c2c, c2p, p2c) with the largest Σ over heads of |term[h, i, j]| on the clean run.
import type { FlowEdge, FlowGrid } from '../api';
import type { TermName } from '../types';
import { emptyPlan, type PatchPlan } from './patch-spec';
import type { ModelSpec } from '../types';

/**
 * `measure(plans)`: each plan's target value on the clean run. `termSizes(layer, edges)`: per edge, per term,
 * Σ over heads of |term| (the clean run's). `onLayer`: progress, after each layer.
 */
export async function flowTrace(
  spec: ModelSpec,
  n: number,
  rows: number[],
  cleanValue: number,
  threshold: number,
  measure: (plans: PatchPlan[]) => Promise<number[]>,
  termSizes: (layer: number, edges: [number, number][]) => Promise<Partial<Record<TermName, number>>[]>,
  onLayer?: (done: number, total: number, layer: number) => void,
): Promise<FlowGrid> {
  const L = spec.numLayers;
  const reached = new Set(rows);
  const edges: FlowEdge[] = [];
  let knockouts = 0;
  for (let l = L - 1; l >= 0; l--) {
    // A row needs two keys: knocking out its only one leaves nothing to attend to.
    const tried: [number, number][] =
      n < 2 ? [] : [...reached].sort((a, b) => a - b).flatMap((i) => Array.from({ length: n }, (_, j) => [i, j] as [number, number]));
    const plans = tried.map(([i, j]) => {
      const p = emptyPlan(spec);
      p.knock.set(l, [[i, j]]);
      p.entries.push(`knock:${l}:${i}->${j}`);
      p.firstLayer = l;
      return p;
    });
    const values = plans.length ? await measure(plans) : [];
    knockouts += plans.length;
    const kept = tried.flatMap(([i, j], k) =>
      Math.abs(values[k]! - cleanValue) > threshold ? [{ i, j, change: values[k]! - cleanValue }] : [],
    );
    const sizes = kept.length
      ? await termSizes(
          l,
          kept.map((e) => [e.i, e.j]),
        )
      : [];
    kept.forEach((e, k) => {
      const byTerm = Object.entries(sizes[k] ?? {}) as [TermName, number][];
      const term = byTerm.reduce((best, cur) => (cur[1] > best[1] ? cur : best), ['c2c', -1] as [TermName, number])[0];
      edges.push({ layer: l, to: e.i, from: e.j, change: e.change, term });
    });
    for (const e of kept) reached.add(e.j);
    onLayer?.(L - l, L, l);
  }
  return { kind: 'flow', axes: ['layer', 'to', 'from'], threshold, target_rows: rows, edges, knockouts };
}
