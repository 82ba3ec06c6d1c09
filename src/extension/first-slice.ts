// The matrix a new result's first heatmap shows, sent with the result itself: the view then paints without a
// request of its own (one message through the webview channel instead of three). The view asks for the layer,
// head and term it showed last (its hover messages say which), so that is what comes along.
import type { ExplainResult, MatrixKind } from '../engine';
import type { SliceResponse, ViewDefaults } from '../shared/protocol';
import { slice } from './layer-requests';

/** Where the view was last: its layer, head and term. */
export interface ViewAt {
  layer: number;
  head: number;
  kind: MatrixKind;
}

/** How long the init waits for the first matrix's layer; past that it goes alone (the view requests it). */
export const FIRST_SLICE_WAIT_MS = 1500;

/**
 * The half-precision slice the view's heatmap will ask for first, or undefined when there is none to guess
 * (another view opens first, the layer is not ready within `waitMs`, or the guess does not fit this result).
 */
export async function firstSlice(result: ExplainResult, at: ViewAt | undefined, defaults: ViewDefaults, waitMs = FIRST_SLICE_WAIT_MS): Promise<SliceResponse | undefined> {
  if (defaults.view !== 'heatmap' || !result.layers.length) return undefined;
  const want: ViewAt = at && result.layers.includes(at.layer) && at.head < result.heads && result.has(at.kind)
    ? at
    : { layer: result.layers[0], head: 0, kind: result.has(defaults.term) ? defaults.term : 'probs' };
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
