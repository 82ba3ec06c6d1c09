// The DeBERTa Lens view: token strip, heatmap with hover readout, head grid and side-by-side compare. Small
// components over one store (state/): each subscribes to the atoms it renders and changes state through
// state/actions.ts; this entry point only creates them, in the order their hover subscriptions run, and
// says `ready` to the host.
import { PROTOCOL_VERSION } from '../../src/shared/protocol/lens';
import { connectRuns } from './state/run-channel';
import { CompareHeads } from './components/compare-heads';
import { followViewState } from './components/controls';
import { ViewExport } from './components/export';
import { HeadsView } from './components/heads-view';
import { HeatmapView } from './components/heatmap-view';
import { persistViewState, post } from './components/host';
import { HoverView } from './components/hover';
import { listenToHost } from './components/message-loop';
import { predictionsSection } from './components/predictions-section';
import { DecisionCard } from './components/decision-card';
import { EmdQueryView } from './components/emd-query';
import { askWhyFor } from './views/why-label';
import { ViewRenderer } from './components/render';
import { MatrixRequests } from './components/requests';
import { listenForShortcuts } from './components/shortcuts';
import { TokenStrip } from './components/token-strip';

connectRuns(post);
persistViewState();
followViewState();
const requests = new MatrixRequests();
// Hover order: heatmap overlay, predictions, compare overlays, then the host, strip and readout.
const heatmap = new HeatmapView(requests);
const predictions = predictionsSection();
const decision = new DecisionCard({ why: askWhyFor, post });
const emdQuery = new EmdQueryView(requests);
const compare = new CompareHeads(requests);
const strip = new TokenStrip();
const hover = new HoverView(requests, strip);
const heads = new HeadsView(requests, compare);
const renderer = new ViewRenderer(requests, heatmap, heads, compare);
listenToHost({
  requests,
  strip,
  hover,
  heatmap,
  heads,
  predictions,
  emdQuery,
  decision,
  exporter: new ViewExport(() => heatmap.withValues()),
  renderer,
});
listenForShortcuts();
post({ type: 'ready', version: PROTOCOL_VERSION });
