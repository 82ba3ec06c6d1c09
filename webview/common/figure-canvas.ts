// The PNG rendering of a figure (figure.ts lays it out): the same texts, map and colour bar on a canvas at the
// figure's width and DPI, the map's cells with hard edges.
import { paintMatrix } from './colors';
import type { ThemeKind } from './colors';
import { barColours, layoutFigure, layoutFigureRow, type FigureSpec } from './figure';

/** A new canvas for a figure `width` × `height` points at `dpi` (at least 72), its background filled and its
 *  context scaled so that one unit is one point: what every PNG figure starts from. */
export function pointCanvas(
  width: number,
  height: number,
  dpi: number,
  background: string,
): { canvas: HTMLCanvasElement; ctx: CanvasRenderingContext2D; k: number } {
  const k = Math.max(1, dpi) / 72;
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * k);
  canvas.height = Math.round(height * k);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('this view cannot draw a PNG (no 2D canvas)');
  ctx.scale(k, k);
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, width, height);
  return { canvas, ctx, k };
}

/** The figure on a new canvas, `dpi` pixels per inch (at least 1 px per point's worth of 72 dpi). */
export function figureCanvas(spec: FigureSpec): HTMLCanvasElement {
  const L = layoutFigure(spec);
  const { canvas, ctx } = pointCanvas(L.width, L.height, spec.dpi, L.background);
  // Each map: one pixel per cell, scaled up without smoothing.
  ctx.imageSmoothingEnabled = false;
  for (const m of L.maps) {
    const cells = document.createElement('canvas');
    cells.width = spec.cols;
    cells.height = spec.rows;
    const cctx = cells.getContext('2d');
    if (!cctx) throw new Error('this view cannot draw a PNG (no 2D canvas)');
    const img = cctx.createImageData(spec.cols, spec.rows);
    paintMatrix(m.values, spec.range, spec.lut, img.data);
    cctx.putImageData(img, 0, 0);
    ctx.drawImage(cells, m.x, m.y, m.w, m.h);
  }
  const steps = barColours(spec.lut);
  const h = L.bar.height / steps.length;
  steps.forEach((c, s) => {
    ctx.fillStyle = c;
    ctx.fillRect(L.bar.x, L.bar.y + L.bar.height - (s + 1) * h, L.bar.width, h + 0.05);
  });
  ctx.strokeStyle = L.foreground;
  ctx.lineWidth = 0.4;
  for (const m of L.maps) ctx.strokeRect(m.x, m.y, m.w, m.h);
  ctx.fillStyle = L.foreground;
  for (const t of L.texts) {
    ctx.save();
    ctx.font = `${t.bold ? 'bold ' : ''}${t.size}px Helvetica, Arial, sans-serif`;
    ctx.textAlign = t.anchor === 'end' ? 'right' : 'left';
    ctx.translate(t.x, t.y);
    if (t.rotate) ctx.rotate((t.rotate * Math.PI) / 180);
    ctx.fillText(t.text, 0, 0);
    ctx.restore();
  }
  return canvas;
}

/** Figures side by side under one title on one canvas (figure.ts layoutFigureRow), `dpi` as figureCanvas. */
export function figureRowCanvas(specs: readonly FigureSpec[], title: string, theme: ThemeKind, dpi: number): HTMLCanvasElement {
  const R = layoutFigureRow(specs, title);
  const dark = theme === 'dark';
  const { canvas, ctx, k } = pointCanvas(R.width, R.height, dpi, dark ? '#1e1e1e' : '#ffffff');
  // The parts are canvases of their own, placed in pixels.
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  if (title) {
    ctx.fillStyle = dark ? '#e6e6e6' : '#1e1e1e';
    ctx.font = `bold ${9 * k}px Helvetica, Arial, sans-serif`;
    ctx.fillText(title, 4 * k, 13 * k);
  }
  specs.forEach((spec, i) => ctx.drawImage(figureCanvas({ ...spec, dpi }), Math.round((R.xs[i] ?? 0) * k), Math.round(R.titleH * k)));
  return canvas;
}
