// Row and column numbers around a small layer × head grid (overview, term shares), as DOM text so they take
// the theme's colours and stay sharp.
import { el } from './dom';

/** Wraps `canvas` (cols × rows cells of `cellPx`) with column labels above and row labels to its left. */
export function withAxisLabels(
  canvas: HTMLElement,
  rowLabels: string[],
  colLabels: string[],
  cellPx: number,
  caption: { rows: string; cols: string },
): HTMLElement {
  const cols = el(
    'div',
    { class: 'grid-cols', 'aria-hidden': 'true' },
    colLabels.map((t) => el('span', {}, [t])),
  );
  cols.style.gridTemplateColumns = `repeat(${colLabels.length}, ${cellPx}px)`;
  const rows = el(
    'div',
    { class: 'grid-rows', 'aria-hidden': 'true' },
    rowLabels.map((t) => el('span', {}, [t])),
  );
  rows.style.gridTemplateRows = `repeat(${rowLabels.length}, ${cellPx}px)`;
  return el('div', { class: 'labelled-grid' }, [
    el('span', { class: 'grid-corner meta' }, [`${caption.rows} ↓ ${caption.cols} →`]),
    cols,
    rows,
    canvas,
  ]);
}
