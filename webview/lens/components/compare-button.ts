// The main panel's "Compare models…" toolbar button: the host runs "Compare with Another Model…" on the text
// the panel shows. Sits in the toolbar's row of controls (no row of its own).
import type { WebviewToHost } from '../../../src/shared/protocol/lens';

type MakeButton = (id: string, label: string, title: string) => HTMLButtonElement;

export function compareModelsButton(btn: MakeButton, post: (m: WebviewToHost) => void): HTMLButtonElement {
  const b = btn('compare-models', 'Compare models…', 'Put another model (DeBERTa or BERT) beside this one on the same text');
  b.addEventListener('click', () => post({ type: 'compareModels' }));
  return b;
}
