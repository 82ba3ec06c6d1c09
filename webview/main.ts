// The DeBERTa Lens view: token strip, heatmap with hover readout, head grid and side-by-side compare. Small
// components over one store (state/): each subscribes to the atoms it renders and changes state through
// state/actions.ts; this entry point only creates them, in the order their hover subscriptions run, and
// says `ready` to the host.
import { PROTOCOL_VERSION } from '../src/shared/protocol';
import { connectRuns } from './run-channel';
import { CompareHeads } from './app/compare-heads';
import { followViewState } from './app/controls';
import { ViewExport } from './app/export';
import { HeadsView } from './app/heads-view';
import { HeatmapView } from './app/heatmap-view';
import { persistViewState, post } from './app/host';
import { HoverView } from './app/hover';
import { listenToHost } from './app/message-loop';
import { predictionsSection } from './app/predictions-section';
import { ViewRenderer } from './app/render';
import { MatrixRequests } from './app/requests';
import { listenForShortcuts } from './app/shortcuts';
import { TokenStrip } from './app/token-strip';

connectRuns(post);
persistViewState();
followViewState();
const requests = new MatrixRequests();
// Hover order: heatmap overlay, predictions, compare overlays, then the host, strip and readout.
const heatmap = new HeatmapView(requests);
const predictions = predictionsSection();
const compare = new CompareHeads(requests);
const strip = new TokenStrip();
const hover = new HoverView(requests, strip);
const heads = new HeadsView(requests, compare);
const renderer = new ViewRenderer(requests, heatmap, heads, compare);
listenToHost({ requests, strip, hover, heatmap, heads, predictions, exporter: new ViewExport(heatmap.heatmap), renderer });
listenForShortcuts();
post({ type: 'ready', version: PROTOCOL_VERSION });
