// The PNG rendering of the atlas figure (atlas-figure.ts lays it out): the same grid, arrows, points, legend and
// texts on a canvas at the figure's width and DPI.
import { pointCanvas } from '../common/figure-canvas';
import { layoutAtlasFigure, type AtlasFigureSpec } from './atlas-figure';

export function atlasFigureCanvas(spec: AtlasFigureSpec): HTMLCanvasElement {
  const L = layoutAtlasFigure(spec);
  const { canvas, ctx } = pointCanvas(L.width, L.height, spec.dpi, L.background);
  ctx.strokeStyle = L.grid;
  ctx.lineWidth = 0.4;
  ctx.beginPath();
  for (const l of L.gridLines) {
    ctx.moveTo(l.x1, l.y1);
    ctx.lineTo(l.x2, l.y2);
  }
  ctx.stroke();
  ctx.strokeStyle = L.foreground;
  ctx.lineWidth = 0.5;
  ctx.strokeRect(L.plot.x, L.plot.y, L.plot.w, L.plot.h);
  ctx.globalAlpha = 0.75;
  for (const a of L.arrows) {
    ctx.strokeStyle = a.colour;
    ctx.fillStyle = a.colour;
    ctx.beginPath();
    ctx.moveTo(...a.from);
    ctx.lineTo(...a.to);
    ctx.stroke();
    ctx.beginPath();
    a.head.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.closePath();
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  for (const d of [...L.dots, ...L.chips]) {
    ctx.fillStyle = d.colour;
    ctx.beginPath();
    ctx.arc(d.x, d.y, d.r, 0, 2 * Math.PI);
    ctx.fill();
  }
  ctx.fillStyle = L.foreground;
  for (const t of L.texts) {
    ctx.save();
    ctx.font = `${t.bold ? 'bold ' : ''}${t.size}px Helvetica, Arial, sans-serif`;
    ctx.textAlign = t.anchor === 'end' ? 'right' : t.anchor === 'middle' ? 'center' : 'left';
    ctx.translate(t.x, t.y);
    if (t.rotate) ctx.rotate((t.rotate * Math.PI) / 180);
    ctx.fillText(t.text, 0, 0);
    ctx.restore();
  }
  return canvas;
}
