// The graphs built on first use after a model opens (prediction heads, EMD passes, intervention tails, sweeps,
// patching, occlusion), each described by a recipe: plain data, so that a load process (model/load-process.ts) can
// build it from the checkpoint's byte ranges when the caller must not (EngineOptions.isolate). One registry turns a
// recipe into its GraphKind, for the caller's process and for that child alike.
import type { Checkpoint } from '../checkpoint';
import { findHeads } from '../checkpoint/heads';
import { buildTailGraph, FORWARD_HEAD_GROUP } from './deberta-graph';
import { buildEmdEditGraph, buildEmdPassesGraph, EMD_EDIT_GRAPH_VERSION, EMD_PASSES_GRAPH_VERSION } from './emd-graph';
import type { GraphKind } from './graph-cache';
import { buildHeadGraph, HEAD_COMPARE_GRAPH_VERSION, HEAD_EMD_GRAPH_VERSION, HEAD_GRAPH_VERSION } from './head-graph';
import { buildOcclusionGraph, OCCLUSION_GRAPH_VERSION } from './occlusion-graph';
import { buildPatchGraph, PATCH_GRAPH_VERSION } from './patch-graph';
import { buildSweepGraph, SWEEP_GRAPH_VERSION } from './sweep-graph';

/** Version of the tail graph (layers from one layer on, with per-head term keep masks), cached on its own. */
export const TAIL_GRAPH_VERSION = 'deberta-lens-tail-2';

export type GraphRecipe =
  /** The prediction heads: plain (fill-mask, RTD), compare (also KL against a reference state), or behind the EMD
   *  (attention in `headGroup` heads at a time, as the forward graph). */
  | { graph: 'head'; variant: 'plain' | 'compare' | 'emd'; headGroup?: number }
  /** The Enhanced Mask Decoder's two passes, plain or with terms removed. */
  | { graph: 'emd-passes' }
  | { graph: 'emd-edit' }
  /** Layers `start`… with keep masks, in the forward graph's head groups (so the numbers agree). */
  | { graph: 'tail'; start: number; headGroup?: number }
  /** Layers `start`… once per variant, each removing one head's term. */
  | { graph: 'sweep'; start: number }
  | { graph: 'patch'; start: number; terms: boolean; knock: boolean }
  | { graph: 'occlusion'; headGroup?: number };

/** The recipe's cache identity (version and variant; the same keys as before recipes) and how to build it. */
export function graphKind(ck: Checkpoint, r: GraphRecipe): GraphKind {
  const last = ck.spec.numLayers - 1;
  switch (r.graph) {
    case 'head':
      return {
        version: { plain: HEAD_GRAPH_VERSION, compare: HEAD_COMPARE_GRAPH_VERSION, emd: HEAD_EMD_GRAPH_VERSION }[r.variant],
        ...(r.headGroup !== undefined ? { variant: `\nheads/${r.headGroup}` } : {}),
        what: `${r.variant} head graph`,
        build: () => buildHeadGraph(ck, findHeads(ck), r.variant === 'compare', r.variant === 'emd', r.headGroup),
      };
    case 'emd-passes':
      return { version: EMD_PASSES_GRAPH_VERSION, what: 'EMD passes graph', build: () => buildEmdPassesGraph(ck) };
    case 'emd-edit':
      return { version: EMD_EDIT_GRAPH_VERSION, what: 'EMD intervention graph', build: () => buildEmdEditGraph(ck) };
    case 'tail': {
      const headGroup = r.headGroup ?? FORWARD_HEAD_GROUP;
      return {
        version: TAIL_GRAPH_VERSION,
        variant: `\nfrom/${r.start}\nheads/${headGroup}`,
        what: `graph of layers ${r.start}…${last}`,
        build: () => buildTailGraph(ck, r.start, headGroup),
      };
    }
    case 'sweep':
      return {
        version: SWEEP_GRAPH_VERSION,
        variant: `\nfrom/${r.start}`,
        what: `sweep graph of layers ${r.start}…${last}`,
        build: () => buildSweepGraph(ck, r.start),
      };
    case 'patch':
      return {
        version: PATCH_GRAPH_VERSION,
        variant: `\n${patchKey(r)}`,
        what: `patch graph of layers ${r.start}…${last}`,
        build: () => buildPatchGraph(ck, { start: r.start, terms: r.terms, knock: r.knock }),
      };
    case 'occlusion': {
      const headGroup = r.headGroup ?? FORWARD_HEAD_GROUP;
      return {
        version: OCCLUSION_GRAPH_VERSION,
        variant: `\nheads/${headGroup}`,
        what: 'occlusion graph',
        build: () => buildOcclusionGraph(ck, headGroup),
      };
    }
  }
}

/** A patch graph's variant (also the key of its runtime process). */
export function patchKey(o: { start: number; terms: boolean; knock: boolean }): string {
  return `from/${o.start}/terms/${o.terms ? 1 : 0}/knock/${o.knock ? 1 : 0}`;
}
