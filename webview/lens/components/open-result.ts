// A result arrives (a new Explain, or the panel shown again): the store starts over for it, the reader's saved
// choices are kept where they still apply, the shell is built and the first picture drawn.
import type { PersistedState, ViewInit } from '../../../src/shared/protocol/lens';
import { reconcileState } from '../state/nav';
import type { PredictionsPanel } from './predictions';
import { showRunBanner } from '../state/run-channel';
import { $kinds } from '../state/selectors';
import { $attribution, $buckets, $current, $decision, $hover, $init, $merged, $viewState } from '../state/store';
import type { DecisionCard } from './decision-card';
import type { EmdQueryView } from './emd-query';
import { pickerLayers } from '../../../src/shared/emd-layers';
import { wireControls } from './controls';
import type { ViewExport } from './export';
import type { HeadsView } from './heads-view';
import type { HeatmapView } from './heatmap-view';
import { post, savedState } from './host';
import type { HoverView } from './hover';
import type { ViewRenderer } from './render';
import type { MatrixRequests } from './requests';
import { buildShell } from './shell';
import type { TokenStrip } from './token-strip';

export interface Panel {
  requests: MatrixRequests;
  strip: TokenStrip;
  hover: HoverView;
  heatmap: HeatmapView;
  heads: HeadsView;
  predictions: PredictionsPanel;
  emdQuery: EmdQueryView;
  decision: DecisionCard;
  exporter: ViewExport;
  renderer: ViewRenderer;
}

export function openResult(next: ViewInit, panel: Panel): void {
  // Marks the UI bench reads (init → shell → first paint); the heatmap marks each paint.
  performance.mark('lens-init');
  const sameResult = $init.get()?.resultId === next.resultId;
  const saved: Partial<PersistedState> | undefined = $viewState.get() ?? savedState();
  panel.requests.reset(next);
  // No state until the new shell is built: nothing draws into the old one meanwhile.
  $viewState.set(undefined);
  $merged.set(undefined);
  $init.set(next);
  $buckets.set(null);
  // A new text's decision comes with its fill-mask; the same result shown again keeps its own.
  if (!sameResult) {
    $decision.set(undefined);
    $attribution.set(undefined);
  }
  $current.set(undefined);
  // The EMD's passes are kept for the result they were picked on (a reload); a new text opens where the host expects.
  const layers = saved?.resultId === next.resultId ? pickerLayers(next.model) : next.model.layers;
  const state = reconcileState(saved, next.defaults, $kinds.get(), layers, next.model.heads, next.tokens.length);
  // A pin belongs to one text: keep it across hide/show of the same result, drop it for a new Explain.
  if (!sameResult && saved?.resultId !== next.resultId) state.pinned = null;
  // Opened from elsewhere at one head and row (a head atlas example): that head's heatmap with the row pinned.
  const at = next.openAt;
  if (at && !sameResult && next.model.layers.includes(at.layer) && at.head < next.model.heads)
    Object.assign(state, { view: 'heatmap', layer: at.layer, head: at.head, headAgg: null, pinned: at.row });
  state.resultId = next.resultId;
  $hover.set({ ...$hover.get(), i: state.pinned, j: null });
  panel.hover.reset();
  buildShell(next, {
    heatmap: panel.heatmap.heatmap.root,
    decision: panel.decision.mount(),
    tokens: panel.strip.mount(),
    predictions: panel.predictions.mount(next.resultId, next.tokens),
    emdQuery: panel.emdQuery.mount(),
  });
  wireControls(panel.exporter);
  panel.heads.wire();
  showRunBanner(next, post);
  $viewState.set(state);
  performance.mark('lens-shell');
  // The distance table only serves the readout: fetch it once the first picture is up, not before.
  void panel.renderer
    .render()
    .then(() => panel.requests.bucketRows())
    .then((b) => {
      if ($init.get() === next) $buckets.set(b);
    })
    .catch(() => undefined); // without the table the readout gives δ alone
}
