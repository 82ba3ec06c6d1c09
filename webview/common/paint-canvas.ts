// A matrix painted into a canvas at one canvas pixel per cell, one putImageData per matrix; CSS scales it up
// with `image-rendering: pixelated`. The head grid, the side-by-side panes, the analysis views and the HTML
// report all paint this way, so equal values are equal pixels everywhere.
import { paintMatrix } from './colors';
import { type Range } from '../../src/shared/value-range';

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

/**
 * A 2D context drawing in CSS pixels on a canvas backed at the device's pixel ratio: the backing store is resized
 * only when its size changes (a resize clears it), and with `style` the canvas's CSS size is set too.
 */
export function cssPixelContext(canvas: HTMLCanvasElement, width: number, height: number, style = false): CanvasRenderingContext2D | null {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(width * dpr),
    h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  if (style) {
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext('2d');
  ctx?.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
