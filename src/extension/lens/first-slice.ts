// The matrix a new result's first heatmap shows, sent with the result itself: the view then paints without a
// request of its own (one message through the webview channel instead of three). The view asks for the layer,
// head and term it showed last (its hover messages say which), so that is what comes along. Explain computes
// that one head with its forward pass (the result's preview), so the first matrix does not wait for its layer.
import type { ExplainResult, MatrixKind, TermName } from '../../engine';
import { openingShape, openingView } from '../../shared/opening-view';
import type { SliceResponse, ViewDefaults } from '../../shared/protocol/lens';
import { halfSlice, slice } from './layer-requests';
import { PICTURE_FROM_TOKENS } from '../../shared/heatmap-picture';

/** Where the view was last: its layer, head and term. */
export interface ViewAt {
  layer: number;
  head: number;
  kind: MatrixKind;
}

/** What a result (or a model about to explain) offers: its layers, heads and terms, and its model type. */
export interface ViewShape {
  type: string;
  layers: readonly number[];
  heads: number;
  terms: readonly TermName[];
}

/** How long the init waits for the first matrix's layer; past that it goes alone (the view requests it). */
export const FIRST_SLICE_WAIT_MS = 1500;

/**
 * The matrix the first heatmap of a result of this shape shows (the shared opening view, from where the view was
 * last); undefined when another view opens first or there is no layer.
 */
export function firstViewAt(shape: ViewShape, at: ViewAt | undefined, defaults: ViewDefaults): ViewAt | undefined {
  if (!shape.layers.length) return undefined;
  const open = openingView(openingShape(shape), defaults, at && { layer: at.layer, head: at.head, term: at.kind });
  return open.view === 'heatmap' ? { layer: open.layer, head: open.head, kind: open.term } : undefined;
}

/**
 * Computes the result's first layer ahead of the view's requests for it; the one place that schedules it. Without
 * a preview the first heatmap needs that layer, and a view still loading asks for it while its page starts. A
 * loaded view paints the preview first and asks for the layer after that paint: computed now, the layer would
 * take the cores from the page while it paints.
 */
export function loadFirstLayer(result: ExplainResult, viewLoaded: boolean): void {
  const first = result.layers[0];
  if (first === undefined || (viewLoaded && result.previewAt)) return;
  result.load(first).catch(() => undefined);
}

/**
 * The half-precision slice the view's heatmap will ask for first, or undefined when there is none to guess
 * (another view opens first, the matrix is neither in the result's preview nor ready within `waitMs`, or the input
 * is long enough that the view asks for a picture).
 */
export async function firstSlice(
  result: ExplainResult,
  at: ViewAt | undefined,
  defaults: ViewDefaults,
  waitMs = FIRST_SLICE_WAIT_MS,
): Promise<SliceResponse | undefined> {
  // A long input's map is asked for as a picture at the canvas's size (heatmap-picture.ts): 7.7 MB of half slice
  // at 2,000 tokens would only hold up the init.
  if (result.n > PICTURE_FROM_TOKENS) return undefined;
  const want = firstViewAt({ type: result.model.type, layers: result.layers, heads: result.heads, terms: result.terms }, at, defaults);
  if (!want) return undefined;
  const preview = result.previewSlice(want.layer, want.head, want.kind);
  if (preview) return halfSlice(want.layer, want.head, want.kind, result.n, preview);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, waitMs, undefined);
  });
  try {
    return await Promise.race([slice(result, want.layer, want.head, want.kind, 'half').catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What explain computes along with its forward pass: the first heatmap's head and the one after it. */
export interface LayerPreviewAsk {
  layer: number;
  head: number;
  heads: number;
}

/** The preview of a model's next result (the opening view from where the view was last), or undefined. */
export function previewAsk(
  info: { type: string; layers: number; heads: number; terms: readonly TermName[] },
  viewAt: ViewAt | undefined,
  defaults: ViewDefaults,
): LayerPreviewAsk | undefined {
  const at = firstViewAt(
    { type: info.type, layers: Array.from({ length: info.layers }, (_, l) => l), heads: info.heads, terms: info.terms },
    viewAt,
    defaults,
  );
  return at && { layer: at.layer, head: at.head, heads: 2 };
}
