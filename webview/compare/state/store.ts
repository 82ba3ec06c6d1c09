// The Compare Models panel's state: one store of atoms, apart from the main panel's (the two pages share no
// state). Components subscribe to the atoms they render and change them through actions.ts; what one component
// alone keeps (its request tracker, the DOM it built) lives in its instance, created once in compare-main.ts.
import { atom, keepMount } from 'nanostores';
import type { CompareInit, CompareSliceRequest, Side } from '../../../src/shared/protocol/compare';
import type { DiffSide } from '../difference';

/** The pair on screen (both sides' models and tokens, the alignment); undefined before the first and after `empty`. */
export const $pair = atom<CompareInit | undefined>(undefined);

/** Each side's layer, head and term pickers. */
export type Picks = Record<Side, CompareSliceRequest>;
export const $picks = atom<Picks | undefined>(undefined);

/** A side's matrix on screen, with what it was asked for. */
export type SideMatrix = DiffSide;
/** The latest matrix each side received (kept while a newer one is computed). */
export const $matrices = atom<Partial<Record<Side, SideMatrix>>>({});

/** Each side's error line ('' when its last request succeeded). */
export const $errors = atom<Partial<Record<Side, string>>>({});

export type CompareView = 'sides' | 'diff';
export const $view = atom<CompareView>('sides');

/** What the pointer is on: a token of one side, or an aligned span (group). */
export type CompareHover = { side: Side; i: number } | { group: number };
export const $hover = atom<CompareHover | null>(null);
/** A click holds the hover until a second click or Escape. */
export const $pinned = atom<CompareHover | null>(null);

/** The heatmap cell under the pointer (query i, key j of `side`), for the readouts. */
export interface Cell {
  side: Side;
  i: number;
  j: number;
}
export const $cell = atom<Cell | null>(null);

/** The page's size, which the heatmaps are sized from (measured at each pair and after a resize settles). */
export interface Viewport {
  width: number;
  height: number;
}
export const $viewport = atom<Viewport>({ width: 0, height: 0 });

// Mounted for the page's life: a store without a listener subscribes and unsubscribes on every get().
for (const $s of [$pair, $picks, $matrices, $errors, $view, $hover, $pinned, $cell, $viewport]) keepMount($s);
