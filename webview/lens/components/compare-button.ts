// The main panel's "Compare models…" toolbar button: the host runs "Compare with Another Model…" on the text
// the panel shows. Sits in the toolbar's row of controls (no row of its own).
import type { WebviewToHost } from '../../../src/shared/protocol/lens';
import { emdPassOf } from '../../../src/shared/emd-layers';
import { $init, $viewState } from '../state/store';

type MakeButton = (id: string, label: string, title: string) => HTMLButtonElement;

export function compareModelsButton(btn: MakeButton, post: (m: WebviewToHost) => void): HTMLButtonElement {
  const b = btn('compare-models', 'Compare models…', 'Put another model (DeBERTa or BERT) beside this one on the same text');
  // Both sides start at the layer and head on screen here.
  b.addEventListener('click', () => {
    const s = $viewState.get();
    // An EMD pass is this model's own: the comparison starts at its first layer instead.
    const pass = s ? emdPassOf($init.get()?.model ?? { layers: [] }, s.layer) : undefined;
    post(s && pass === undefined ? { type: 'compareModels', layer: s.layer, head: s.head } : { type: 'compareModels' });
  });
  return b;
}
