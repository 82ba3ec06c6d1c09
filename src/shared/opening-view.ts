// Where a result opens: the view, and the layer, head and term its heatmap shows first. Three places need the
// answer and must agree, or the first heatmap waits for a layer nobody computed ahead: the host before the
// explain (which head to compute with the forward pass), the host after it (the first slice sent with the
// result), and the webview restoring the state it saved. Pure, so both sides import it.
import { viewKinds, type MatrixKind, type TermName } from './kinds';
import { ANALYSIS_VIEWS, type ViewName } from './protocol/lens';

/** What a result (or a model about to explain) offers the view. */
export interface OpeningShape {
  /** The kinds the view's pickers list (`viewKinds`): a term outside them is never shown first. */
  kinds: readonly MatrixKind[];
  layers: readonly number[];
  heads: number;
}

/** The settings' defaults for a result with no usable last view. */
export interface OpeningDefaults {
  term: MatrixKind;
  view: ViewName;
}

/**
 * Where the view was last, as far as the caller knows it: the webview saves all of it, the host learns the
 * matrix from the view's hover messages but not the view. Values may be stale (another model) or junk (an old
 * saved state), so each is checked.
 */
export interface LastView {
  view?: string;
  layer?: number;
  head?: number;
  term?: MatrixKind;
}

export interface OpeningView {
  view: ViewName;
  layer: number;
  head: number;
  term: MatrixKind;
}

/** The shape of a model or result: its kinds as the view's pickers list them. */
export function openingShape(model: { type: string; layers: readonly number[]; heads: number; terms: readonly TermName[] }): OpeningShape {
  return { kinds: viewKinds(model), layers: model.layers, heads: model.heads };
}

export function isViewName(v: unknown): v is ViewName {
  return v === 'heatmap' || v === 'heads' || (ANALYSIS_VIEWS as readonly unknown[]).includes(v);
}

/**
 * The view a result opens in and the matrix its heatmap shows first. The last view is kept when it is a view;
 * the last matrix is kept as a whole when the result has its layer, head and term, else the first layer's head 0
 * in the default term (probs when the pickers lack it). A whole matrix or none: half the old picks mixed with the
 * defaults is a matrix nobody chose, and the host's guess and the view must land on the same one.
 */
export function openingView(shape: OpeningShape, defaults: OpeningDefaults, last?: LastView): OpeningView {
  const view = last && isViewName(last.view) ? last.view : defaults.view;
  const { layer, head, term } = last ?? {};
  if (layer !== undefined && head !== undefined && term !== undefined && hasMatrix(shape, layer, head, term))
    return { view, layer, head, term };
  return { view, layer: shape.layers[0] ?? 0, head: 0, term: shape.kinds.includes(defaults.term) ? defaults.term : 'probs' };
}

function hasMatrix(shape: OpeningShape, layer: number, head: number, term: MatrixKind): boolean {
  return shape.layers.includes(layer) && Number.isInteger(head) && head >= 0 && head < shape.heads && shape.kinds.includes(term);
}
