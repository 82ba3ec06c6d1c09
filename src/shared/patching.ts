// Messages of the Patching tab: clean-vs-corrupted activation patching of the explained text (a causal trace over
// layer × position, each head's term alone, the attention edges that carry the target), run by the host with
// progress and cancel on the Intervention tab's run channel. Types, validation and the grids' CSV (both builds
// import this).
import type { TermName } from './kinds';
import { csvCell } from './markup-text';
import { isInt } from './protocol/checks';

/** resid: layer × position (the causal trace); heads: layer × head per term; flow: attention edges to the target. */
export type PatchTraceName = 'resid' | 'heads' | 'flow';
export const PATCH_TRACES: readonly PatchTraceName[] = ['resid', 'heads', 'flow'];

export type PatchToHost =
  /** The explained input as the model read it (the corrupted text's fields start from it). */
  | { type: 'patchSetup'; id: number; resultId: number }
  /** One trace of the explained (clean) text against `corrupt`; `label`: a classifier's label id followed (absent =
   *  the clean run's decision); `position`: masked-LM / token-classification position (null = the default). */
  | {
      type: 'patch';
      id: number;
      resultId: number;
      trace: PatchTraceName;
      corrupt: string;
      corruptPair?: string;
      label?: number;
      position: number | null;
      /** Flow: keep an edge whose knockout moves the target by more than this (absent = the engine's default). */
      threshold?: number;
    }
  | { type: 'exportPatch'; format: 'json' | 'csv'; trace: PatchTraceName };

/** The explained input: one text, or a sentence pair's two texts. */
export interface PatchSetup {
  text: string;
  pair?: string;
}

export interface PatchFlowEdge {
  layer: number;
  /** Query row (the edge's head) and the key it reads: information flows from `from` to `to`. */
  to: number;
  from: number;
  /** Target after the knockout − clean target. */
  change: number;
  /** The term carrying most of the edge's pre-softmax score (Σ over heads of |term|). */
  term: TermName;
  /** Each term's share of that sum, when the engine gives it. */
  shares?: Partial<Record<TermName, number>>;
}

/** The causal trace: restored[layer][position] (layer = the state entering it; the last row, the final state). */
export interface PatchResidGrid {
  kind: 'resid';
  axes: ['layer', 'position'];
  restored: (number | null)[][];
  value: number[][];
}

/** Each head's term alone: restored[term][layer][head]. `value` holds the raw patched values alike. */
export interface PatchHeadsGrid {
  kind: 'heads';
  axes: ['term', 'layer', 'head'];
  terms: TermName[];
  restored: Partial<Record<TermName, (number | null)[][]>>;
  value: Partial<Record<TermName, number[][]>>;
}

export type PatchGridView =
  | PatchResidGrid
  | PatchHeadsGrid
  | { kind: 'flow'; axes: ['layer', 'to', 'from']; threshold: number; targetRows: number[]; edges: PatchFlowEdge[]; knockouts: number };

/** What a trace gives the view: the grid, the target and its raw values, and each run's prediction in words. */
export interface PatchView {
  trace: PatchTraceName;
  layers: number;
  heads: number;
  /** The attention terms the model has (BERT: c2c alone, its whole score): the flow's legend lists these. */
  terms: TermName[];
  /** The clean and corrupted tokens as the view labels them, and the positions where they differ. */
  tokens: string[];
  corruptTokens: string[];
  differing: number[];
  /** What is followed ("log p of “dog” at 7", "logit of label next") and the row it is read at. */
  target: string;
  targetPosition: number | null;
  /** 'log p' (masked LM) or 'logit'. */
  unit: string;
  clean: number;
  corrupt: number;
  /** One line per run: its prediction (top tokens at the followed position, or the labels and their scores). */
  predictions: { clean: string; corrupt: string };
  grid: PatchGridView;
  reruns: number;
  ms: number;
}

const isTrace = (x: unknown): x is PatchTraceName => x === 'resid' || x === 'heads' || x === 'flow';
/** Longest corrupted text the view may send (the engine checks the token count). */
const MAX_TEXT = 200_000;
const isText = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= MAX_TEXT;

/** Validates a Patching message from the webview (untrusted input for the host); anything else gives undefined. */
export function parsePatchMessage(m: Record<string, unknown>): PatchToHost | undefined {
  switch (m.type) {
    case 'patchSetup':
      return isInt(m.id) && isInt(m.resultId) ? { type: 'patchSetup', id: m.id, resultId: m.resultId } : undefined;
    case 'patch': {
      if (!isInt(m.id) || !isInt(m.resultId) || !isTrace(m.trace) || !isText(m.corrupt)) return undefined;
      if (m.corruptPair !== undefined && !isText(m.corruptPair)) return undefined;
      if (m.label !== undefined && !(isInt(m.label) && m.label >= 0)) return undefined;
      if (!(m.position === null || (isInt(m.position) && m.position >= 0))) return undefined;
      if (m.threshold !== undefined && !(typeof m.threshold === 'number' && Number.isFinite(m.threshold) && m.threshold >= 0))
        return undefined;
      return {
        type: 'patch',
        id: m.id,
        resultId: m.resultId,
        trace: m.trace,
        corrupt: m.corrupt,
        ...(m.corruptPair === undefined ? {} : { corruptPair: m.corruptPair }),
        ...(m.label === undefined ? {} : { label: m.label }),
        position: m.position,
        ...(m.threshold === undefined ? {} : { threshold: m.threshold }),
      };
    }
    case 'exportPatch':
      return (m.format === 'json' || m.format === 'csv') && isTrace(m.trace)
        ? { type: 'exportPatch', format: m.format, trace: m.trace }
        : undefined;
    default:
      return undefined;
  }
}

const num = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '' : String(x));

/** A trace's grid as CSV, one row per cell with its axes named: resid `layer,position,token,…`, heads
 *  `term,layer,head,…`, flow one row per edge. Every row also carries the target and its clean / corrupt values. */
export function patchCsv(v: PatchView): string {
  const tail = [csvCell(v.target), num(v.clean), num(v.corrupt)].join(',');
  const g = v.grid;
  const tok = (k: number) => csvCell(v.tokens[k] ?? `#${k}`);
  const lines: string[] = [];
  if (g.kind === 'resid') {
    lines.push('layer,position,token,restored,value,target,clean,corrupt');
    g.restored.forEach((row, l) => row.forEach((r, i) => lines.push([l, i, tok(i), num(r), num(g.value[l]?.[i]), tail].join(','))));
  } else if (g.kind === 'heads') {
    lines.push('term,layer,head,restored,value,target,clean,corrupt');
    for (const t of g.terms)
      (g.restored[t] ?? []).forEach((row, l) =>
        row.forEach((r, h) => lines.push([t, l, h, num(r), num(g.value[t]?.[l]?.[h]), tail].join(','))),
      );
  } else {
    lines.push('layer,to,to_token,from,from_token,change,term,c2c_share,c2p_share,p2c_share,target,clean,corrupt');
    for (const e of g.edges)
      lines.push(
        [
          e.layer,
          e.to,
          tok(e.to),
          e.from,
          tok(e.from),
          num(e.change),
          e.term,
          num(e.shares?.c2c),
          num(e.shares?.c2p),
          num(e.shares?.p2c),
          tail,
        ].join(','),
      );
  }
  return `${lines.join('\n')}\n`;
}

/** The file name a trace's export proposes. */
export function patchFileStem(trace: PatchTraceName): string {
  return trace === 'resid' ? 'causal-trace' : trace === 'heads' ? 'patch-head-terms' : 'patch-flow';
}
