// A matrix painted into a canvas at one canvas pixel per cell, one putImageData per matrix; CSS scales it up
// with `image-rendering: pixelated`. The head grid, the side-by-side panes, the analysis views and the HTML
// report all paint this way, so equal values are equal pixels everywhere.
import { paintMatrix, type Range } from './colors';

/** Paints `[rows, cols]` (row-major) into `canvas`, resizing it to `cols` × `rows` pixels. */
export function paintInto(
  canvas: HTMLCanvasElement,
  values: Float32Array,
  rows: number,
  cols: number,
  range: Range,
  lut: Uint8ClampedArray,
): void {
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(cols, rows);
  paintMatrix(values, range, lut, img.data);
  ctx.putImageData(img, 0, 0);
}
