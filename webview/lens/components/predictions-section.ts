// The Predictions section (predictions.ts) joined to the store: it follows the hovered or pinned row, and its
// own hover (the RTD band) moves the panel's hover.
import { PredictionsPanel, rowOfPiece } from './predictions';
import { setHover } from '../state/actions';
import { $hover, $init, $merged, $viewState } from '../state/store';
import { post } from './host';

export function predictionsSection(): PredictionsPanel {
  const panel = new PredictionsPanel({ post, hover: (p) => setHover(rowOfPiece(p, $merged.get()), null) });
  $hover.listen(({ i }) => {
    const state = $viewState.get();
    if (state && $init.get()) panel.focus(i, state.pinned !== null, $merged.get());
  });
  return panel;
}
