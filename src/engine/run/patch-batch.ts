// How patched reruns run: variants that start at the same layer go through the patch graph (graph/patch-graph.ts)
// as one batch, in a runtime process of its own per graph, each returning only the followed rows of its final state.
import { LensError } from '../errors';
import { relativeInputs } from '../graph/graph-inputs';
import { LayerInput } from '../graph/deberta-io';
import { patchKey } from '../graph/graph-recipes';
import { PATCH_ROWS, PatchFeed, type PatchGraphOptions } from '../graph/patch-graph';
import { availableMemory } from '../memory/available-memory';
import { GraphSessions } from '../runtime/graph-sessions';
import type { FeedTensor } from '../runtime/messages';
import type { RuntimeSession } from '../runtime/session';
import { int64Feeds } from './input';
import { lazyGraph } from './lazy-graph';
import { type PatchPlan, PATCH_SITES } from './patch-spec';
import type { RunBase } from './run-base';
import { modelTerms } from './ablation-spec';

/** What the clean and corrupted runs kept: the states entering every layer, the final state (index L), the
 *  relative rows (the same for both: they depend on the length only; none for BERT or a model without relative terms). */
export interface KeptRuns {
  n: number;
  clean: Float32Array[];
  corrupt: Float32Array[];
  rel: Float32Array | undefined;
  relRows: number;
}

/** The graph a group of plans starting at `start` needs (head sites, knockouts) — fewer inputs when not. */
export function graphOptions(start: number, plans: PatchPlan[]): PatchGraphOptions {
  return { start, terms: plans.some((p) => p.heads.size > 0), knock: plans.some((p) => p.knock.size > 0) };
}

/** The patch graphs' runtime processes, one per graph (start layer and inputs), kept with the model. Each holds its
 *  start layer's weights and all later ones'. A sweep goes through every start layer, and starting a process per
 *  layer per sweep cost more than the reruns themselves (v3-base's causal trace on a GPU: 9 s of 11), so processes
 *  stay up while their weights fit in a quarter of the memory still available; past that the least recently used
 *  stop (on v3-large, one at a time: what it always was). */
export class PatchSessions extends GraphSessions<string> {
  /** The processes up, least recently used first, with their weights' bytes. */
  private readonly live = new Map<string, number>();

  constructor(
    private readonly model: RunBase,
    private readonly room: () => number = availableMemory,
  ) {
    super();
  }

  static key(o: PatchGraphOptions): string {
    return patchKey(o);
  }

  /** The float32 weights of layers `start`… (what a patch graph's process holds). */
  private weightBytes(start: number): number {
    const { hiddenSize: D, intermediateSize: I, numLayers: L } = this.model.checkpoint.spec;
    return 4 * (L - start) * (4 * D * D + 2 * D * I);
  }

  /** The keys whose processes stay up when `key`'s starts (its own excluded). */
  keep(key: string, bytes: number): string[] {
    const budget = this.room() / 4;
    const kept = [...this.live].filter(([k]) => k !== key);
    let total = bytes + kept.reduce((a, [, b]) => a + b, 0);
    while (kept.length > 0 && total > budget) total -= kept.shift()![1];
    return kept.map(([k]) => k);
  }

  async start(o: PatchGraphOptions): Promise<RuntimeSession> {
    const key = PatchSessions.key(o);
    const bytes = this.weightBytes(o.start);
    const keep = new Set(this.keep(key, bytes));
    for (const k of [...this.live.keys()])
      if (k !== key && !keep.has(k)) {
        this.live.delete(k);
        await this.idle(k);
      }
    this.live.delete(key);
    this.live.set(key, bytes);
    const graph = () => lazyGraph(this.model, { graph: 'patch', start: o.start, terms: o.terms, knock: o.knock });
    // The encoder's process is idle while the reruns run: the same threads.
    return this.session(key, 'tail', graph, this.model.executionProvider, this.model.threads);
  }

  override async dispose(): Promise<void> {
    this.live.clear();
    await super.dispose();
  }
}

/**
 * One batched rerun of `plans` (all starting at o.start) from the corrupted state, with the clean values their specs
 * name put in: each variant's final state at `positions`, [plans · positions, D], variant-major.
 */
export async function runPatches(
  model: RunBase,
  session: RuntimeSession,
  o: PatchGraphOptions,
  plans: PatchPlan[],
  kept: KeptRuns,
  positions: number[],
  signal?: AbortSignal,
): Promise<{ ms: number; data: Float32Array }> {
  const spec = model.checkpoint.spec,
    D = spec.hiddenSize,
    H = spec.numHeads,
    L = spec.numLayers;
  const { n } = kept;
  const V = plans.length,
    Lt = L - o.start;
  const clean = new Float32Array((Lt + 1) * n * D);
  for (let j = 0; j <= Lt; j++) clean.set(kept.clean[o.start + j]!, j * n * D);
  const resid = new Float32Array(V * (Lt + 1) * n);
  plans.forEach((p, v) => {
    for (const [l, where] of p.resid) {
      if (l < o.start) throw new LensError(`patch ${p.entries.join(',')}: resid:${l} is before the rerun's first layer ${o.start}`);
      const base = (v * (Lt + 1) + (l - o.start)) * n;
      if (where === 'all') resid.fill(1, base, base + n);
      else for (const i of where) resid[base + i] = 1;
    }
  });
  const feeds: Record<string, FeedTensor> = {
    [LayerInput.hidden]: { type: 'float32', data: kept.corrupt[o.start]!, dims: [n, D] },
    [PatchFeed.clean]: { type: 'float32', data: clean, dims: [Lt + 1, n, D] },
    [PatchFeed.resid]: { type: 'float32', data: resid, dims: [V, Lt + 1, n] },
    [PatchFeed.positions]: { type: 'int64', data: BigInt64Array.from(positions, BigInt), dims: [positions.length] },
  };
  if (kept.rel) feeds[LayerInput.rel] = { type: 'float32', data: kept.rel, dims: [kept.relRows, D] };
  if (o.terms) {
    const sites = PATCH_SITES.filter((s) => s === 'all' || s === 'out' || modelTerms(spec).includes(s));
    for (const site of sites) {
      const mask = new Float32Array(V * Lt * H);
      plans.forEach((p, v) => {
        for (const [l, bySite] of p.heads) for (const h of bySite[site] ?? []) mask[(v * Lt + (l - o.start)) * H + h] = 1;
      });
      feeds[PatchFeed.site(site)] = { type: 'float32', data: mask, dims: [V, Lt, H] };
    }
  }
  if (o.knock) {
    const bias = new Float32Array(V * Lt * n * n);
    plans.forEach((p, v) => {
      for (const [l, edges] of p.knock) for (const [i, j] of edges) bias[((v * Lt + (l - o.start)) * n + i) * n + j] = -Infinity;
    });
    feeds[PatchFeed.knock] = { type: 'float32', data: bias, dims: [V, Lt, n, n] };
  }
  Object.assign(feeds, int64Feeds(relativeInputs(spec, n)));
  const run = await session.run('tail', feeds, [PATCH_ROWS], signal);
  try {
    const data = run.outputs.read(PATCH_ROWS);
    if (!data.every(Number.isFinite))
      throw new LensError(`${model.checkpoint.dir}: a patched rerun from layer ${o.start} gave non-finite states`, 'runtime');
    return { ms: run.ms, data };
  } finally {
    run.outputs.release();
  }
}
