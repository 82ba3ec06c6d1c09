// The term picker the Line and Model views carry above their pictures: one toggle button per kind the model
// has, the current one pressed; a click changes the panel's term (so the heatmap opened next shows it too).
import type { MatrixKind } from '../../../src/shared/kinds';
import { el } from '../../common/dom';
import { update } from '../state/actions';
import { $kinds } from '../state/selectors';

export function termButtons(id: string, current: MatrixKind): HTMLElement {
  const buttons = $kinds.get().map((k) => {
    const b = el('button', { type: 'button', class: 'term-button', 'data-term': k, 'aria-pressed': String(k === current) }, [k]);
    b.addEventListener('click', () => {
      if (k !== current) update({ term: k });
    });
    return b;
  });
  return el('span', { id, class: 'term-buttons', role: 'group', 'aria-label': 'Term' }, ['Term ', ...buttons]);
}
