// The Compare Models panel's page: two models on the same text. Each side has its own pickers and heatmap; the
// alignment strip shows how the tokenizers split the text; hovering a token, a heatmap row or an aligned span
// lights up the same characters and what they attend to on both sides; the Difference tab subtracts B from A.
// Small components over the compare store (compare/state/), as the main panel is over its own; this entry point
// only creates them and says `ready` to the host.
import { COMPARE_PROTOCOL_VERSION } from '../../src/shared/protocol/compare';
import { AlignmentView } from './alignment-view';
import { DifferenceView } from './difference-view';
import { host, persistCompareState } from './host';
import { listenToCompareHost } from './message-loop';
import { followPageFlags } from './page-flags';
import { SliceRequests } from './requests';
import { listenForEscape } from './shortcuts';
import { CompareSides } from './sides';
import { followViewport } from './sizes';
import { resized } from './state/actions';
import { CompareToolbar } from './toolbar';

persistCompareState();
followViewport(resized);
followPageFlags();
listenForEscape();
listenToCompareHost({
  requests: new SliceRequests(),
  toolbar: new CompareToolbar(),
  alignment: new AlignmentView(),
  difference: new DifferenceView(),
  sides: new CompareSides(),
});
host.post({ type: 'ready', version: COMPARE_PROTOCOL_VERSION });
