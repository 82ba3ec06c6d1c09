// Token labels on both axes of a plain matrix canvas (the analysis views' maps): words at word starts, thinned so
// that none overlaps, in the theme's colours. The interactive heatmap draws its own (it zooms); these are fixed.
import { cssPixelContext } from './paint-canvas';
import { axisTicks } from './axis-ticks';
import { el } from './dom';
import { labelStride } from './viewport';

/** Room for the labels: a word of about 8 characters and its row number. */
export const MATRIX_AXES = { left: 64, top: 48 };
/** px the slanted column labels run past the map's right edge. */
const OVERHANG = 16;

/** `text`, cut with "…" only where it is wider than `px` at the context's font. */
export function fitText(g: CanvasRenderingContext2D, text: string, px: number): string {
  if (g.measureText(text).width <= px) return text;
  let t = text;
  while (t.length > 1 && g.measureText(`${t}…`).width > px) t = t.slice(0, -1);
  return `${t}…`;
}

/**
 * `canvas` (n × n cells, `px` CSS px square) with the rows' labels left of it and the columns' above it.
 * `words`: one per row, the word on its first piece and '' on the others; `pieces`: each row's own piece, the
 * label once every row has room for one.
 */
export function axisFrame(canvas: HTMLCanvasElement, words: readonly string[], pieces: readonly string[], px: number): HTMLElement {
  const n = words.length;
  const left = el('canvas', { class: 'axis', 'aria-hidden': 'true' });
  const top = el('canvas', { class: 'axis', 'aria-hidden': 'true' });
  const cellPx = px / Math.max(1, n);
  const stride = labelStride(cellPx, 12);
  const ticks = axisTicks(words, 0, n, stride);
  const style = getComputedStyle(document.body);
  const colour = style.getPropertyValue('--vscode-descriptionForeground').trim() || '#888888';
  const family = style.getPropertyValue('--vscode-editor-font-family').trim() || 'monospace';
  const font = Math.max(9, Math.min(11, Math.floor(cellPx) - 1));
  const text = (k: number) => (stride === 1 ? (pieces[k] ?? '') : `${k} ${words[k] ?? ''}`);
  const at = (k: number) => Math.min(px - font / 2, Math.max(font / 2, (k + 0.5) * cellPx));
  const gl = cssPixelContext(left, MATRIX_AXES.left, px, true);
  if (gl) {
    gl.font = `${font}px ${family}`;
    gl.fillStyle = colour;
    gl.textBaseline = 'middle';
    gl.textAlign = 'right';
    for (const k of ticks) {
      gl.fillText(fitText(gl, text(k), MATRIX_AXES.left - 8), MATRIX_AXES.left - 6, at(k));
      gl.fillRect(MATRIX_AXES.left - 3, at(k) - 0.5, 3, 1);
    }
  }
  const gt = cssPixelContext(top, px + OVERHANG, MATRIX_AXES.top, true);
  if (gt) {
    gt.font = `${font}px ${family}`;
    gt.fillStyle = colour;
    gt.textBaseline = 'middle';
    gt.textAlign = 'left';
    for (const k of ticks) {
      gt.save();
      gt.translate(at(k), MATRIX_AXES.top - 4);
      gt.rotate(-Math.PI / 3);
      gt.fillText(fitText(gt, text(k), (MATRIX_AXES.top - 8) / Math.sin(Math.PI / 3)), 4, 0);
      gt.restore();
      gt.fillRect(at(k) - 0.5, MATRIX_AXES.top - 3, 1, 3);
    }
  }
  const frame = el('div', { class: 'matrix-axes', 'data-labels': String(ticks.length) }, [
    el('span', { class: 'axis-corner-text meta' }, ['keys →', el('br'), 'queries ↓']),
    top,
    left,
    canvas,
  ]);
  frame.style.gridTemplateColumns = `${MATRIX_AXES.left}px ${px + OVERHANG}px`;
  frame.style.gridTemplateRows = `${MATRIX_AXES.top}px auto`;
  return frame;
}
