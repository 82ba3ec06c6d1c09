// What the hover shows outside the maps: the host's editor highlight, the strip's lit neighbours and the
// readout. The query's row comes from the matrix on screen at once, then exactly from the host.
import { neighbours } from '../../../src/shared/hover';
import { $aggregated } from '../state/selectors';
import { sparseRow } from '../../../src/shared/hover';
import { $current, $hover, $init, $merged, $viewState, shownKey, type Rows } from '../state/store';
import { post } from './host';
import { renderReadout, renderReadoutIdle } from './readout-view';
import type { MatrixRequests } from './requests';
import { reportError } from './status';
import type { TokenStrip } from './token-strip';

/** Keys listed per query. */
/** Neighbours the strip lights for a hovered token. */
export const HOVER_TOP_K = 8;

export class HoverView {
  /** The latest hover: a row that arrives after the pointer moved on is dropped. */
  private seq = 0;
  /** The hover last told to the host, so it hears of each change once. */
  private sent = '';

  constructor(
    private readonly requests: MatrixRequests,
    private readonly strip: TokenStrip,
  ) {
    $hover.listen(() => this.refresh());
  }

  /** A new result: the host hears of the next hover whatever it is. */
  reset(): void {
    this.sent = '';
  }

  private refresh(): void {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const { i, j } = $hover.get();
    const merged = $merged.get();
    const msg = `${state.pinned ?? ''}|${i ?? ''}|${state.layer}|${state.head}|${state.term}`;
    if (msg !== this.sent) {
      this.sent = msg;
      // The editor lights pieces: a merged word is reported as its first piece.
      const piece = i !== null && merged ? (merged[i]?.pieces[0] ?? null) : i;
      post({
        type: 'hover',
        resultId: init.resultId,
        hover: { i: piece, layer: state.layer, head: state.head, kind: state.term, pinned: state.pinned !== null },
      });
    }
    if (i === null) {
      this.strip.unlight();
      renderReadoutIdle();
      return;
    }
    const seq = ++this.seq;
    const { layer, head, term } = state;
    const show = (rows: Rows, exact: boolean) => {
      if (seq !== this.seq || !$init.get()) return;
      const row = rows[term];
      if (!row) return;
      const nbs = neighbours(row, term, HOVER_TOP_K);
      // Moving along one row only moves the key marker: the strip's neighbours stay as they are. The exact row
      // relights them once more: their titles give numbers, which the half-precision slice only approximates.
      this.strip.light(`${msg}|${$viewState.get()?.colorScale}|${exact}`, i, nbs);
      this.strip.markKey(j);
      if (exact) renderReadout(i, j, nbs, rows);
    };
    const current = $current.get();
    // A long input's map came as a picture: the strip lights from each row's neighbours the host sent after it.
    const onScreen = (): Rows =>
      current?.values
        ? { [term]: current.values.subarray(i * current.n, (i + 1) * current.n) }
        : current?.tops
          ? { [term]: sparseRow(current.tops, current.n, i) }
          : {};
    if ($aggregated.get()) {
      // The host's row request is per head: an aggregated map answers hover from the matrix on screen.
      if (current && current.n > i) show(onScreen(), true);
      return;
    }
    // A picture whose rows' neighbours have not come yet: ask for them now (the next hover lights at once).
    const onScreenKey = current?.key === shownKey(layer, head, term);
    if (current && onScreenKey && !current.values && !current.tops) this.requests.hoverTops(layer, head, term, HOVER_TOP_K);
    const cached = this.requests.cachedRow(layer, head, i);
    if (cached) return show(cached, true);
    // The strip can light up at once from the slice on screen; the exact readout follows the host's row.
    if (onScreenKey) show(onScreen(), false);
    void this.requests
      .row(layer, head, i)
      .then((rows) => show(rows, true))
      .catch(reportError);
  }
}
