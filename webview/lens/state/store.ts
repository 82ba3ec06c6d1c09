// The main panel's one state store: every piece of state more than one component reads is an atom here, and
// components subscribe to the atoms they render (the house model: small components over one store of atoms and
// selectors; selectors are in selectors.ts). nanostores: atoms and computed selectors in about 1 KB, no
// framework (the views are canvases drawn imperatively). What one component alone keeps (a request cache, which
// strip chips it lit) lives in that component's instance, created once in main.ts.
import { atom, keepMount } from 'nanostores';
import type { Decision } from '../../../src/shared/decision';
import type { MatrixKind } from '../../../src/shared/kinds';
import type { Attribution, OcclusionMethodName } from '../../../src/shared/occlusion';
import type { ViewInit, WordGroupInfo } from '../../../src/shared/protocol/lens';
import type { Range } from '../../../src/shared/value-range';
import type { ViewState } from './nav';

/** The result on screen (tokens, model shape, defaults); undefined before the first one and after `empty`. */
export const $init = atom<ViewInit | undefined>(undefined);

/** What the fine-tuned checkpoint decided about the result on screen (undefined: no task head, or not yet known). */
export const $decision = atom<Decision | undefined>(undefined);

/** "Which words made it say that?": the occlusion of the result on screen, what it follows, and the method shown. */
export interface AttributionState {
  attribution: Attribution;
  /** The label or span asked about, as the card names it. */
  asked: string;
  method: OcclusionMethodName;
}
export const $attribution = atom<AttributionState | undefined>(undefined);

/** What the reader chose (view, term, layer, head, pin, …); persisted with the webview's state. */
export const $viewState = atom<ViewState | undefined>(undefined);

/**
 * Query row i and key column j under the pointer or keyboard cursor (strip, heatmap or editor); a pin overrides
 * i. `fromStrip`: the pointer is on the strip, which then does not scroll neighbours into view. Setting it (even
 * to equal numbers) shows the hover again under the current state.
 */
export interface Hover {
  i: number | null;
  j: number | null;
  fromStrip: boolean;
}
export const $hover = atom<Hover>({ i: null, j: null, fromStrip: false });

/** The key of one head's map on screen (ShownMatrix.key): layer/head/term. */
export function shownKey(layer: number, head: number, term: string): string {
  return `${layer}/${head}/${term}`;
}

/** The heatmap on screen: raw `values` (hover, readout) and the `shown` ones the colours come from (row-scaled or not). */
export interface ShownMatrix {
  /** The matrix and its mapped values; absent for a long input's map, which comes as a picture (heatmap-picture.ts). */
  values?: Float32Array;
  shown?: Float32Array;
  /** With a picture: each row's hover neighbours (rowTops), once they came. */
  tops?: { m: number; idx: Int32Array; val: Float32Array };
  range: Range;
  n: number;
  key: string;
}
export const $current = atom<ShownMatrix | undefined>(undefined);

/** Word groups the heatmap and the strip show (word merging on, heatmap view); strip/heatmap index = group. */
export const $merged = atom<WordGroupInfo[] | undefined>(undefined);

/** Relative-position table row of every (query, key) pair, for the readout's distances (null: not fetched). */
export interface BucketRows {
  rowOf: Float32Array;
  zoneOf: Float32Array;
  zones: string[];
  n: number;
}
export const $buckets = atom<BucketRows | undefined | null>(null);

/** The heads shown side by side under the head grid, with their matrices (the readout's comparison line). */
export interface ComparePane {
  head: number;
  values: Float32Array;
}
export const $comparePanes = atom<ComparePane[]>([]);

/** Bumped to ask for the view to be drawn again (a new result, a new matrix or view). */
export const $renderEpoch = atom(0);

export type Rows = Partial<Record<MatrixKind, Float32Array>>;

// Mounted for the page's life: a store without a listener subscribes and unsubscribes on every get(), and
// hover reads them many times a second.
for (const $s of [$init, $viewState, $hover, $current, $merged, $buckets, $comparePanes, $renderEpoch]) keepMount($s);
