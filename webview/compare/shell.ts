// The compare panel's layout for a pair: toolbar, alignment strip, the Difference tab, both sides and the keys
// line. Only the DOM: each component fills its part.
import { $, el } from '../common/dom';

export interface CompareShellParts {
  toolbar: HTMLElement;
  alignment: HTMLElement;
  difference: HTMLElement;
  sides: HTMLElement;
}

export function buildCompareShell(parts: CompareShellParts): void {
  const app = $('#app');
  app.replaceChildren(
    parts.toolbar,
    parts.alignment,
    parts.difference,
    parts.sides,
    el('p', { class: 'keys meta' }, ['Click pins the hovered tokens; click again or Escape releases them. Wheel or + − zoom a heatmap.']),
  );
  app.dataset.state = 'ready';
}
