// The Line view's figure on a canvas at the spec's DPI (the PNG export): the layout ./line-figure.ts makes for SVG.
import { pointCanvas } from '../../common/figure-canvas';
import { layoutLineFigure, type LineFigureSpec } from './line-figure';

export function lineFigureCanvas(spec: LineFigureSpec, background: string): HTMLCanvasElement {
  const l = layoutLineFigure(spec);
  const { canvas, ctx } = pointCanvas(l.width, l.height, spec.dpi, background);
  ctx.lineWidth = 0.6;
  ctx.lineCap = 'round';
  for (const s of l.strokes) {
    ctx.globalAlpha = s.alpha;
    ctx.strokeStyle = s.colour;
    ctx.beginPath();
    ctx.moveTo(s.x1, s.y1);
    ctx.lineTo(s.x2, s.y2);
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = spec.colours.text;
  for (const t of l.labels) {
    ctx.font = `${t.bold ? 'bold ' : ''}${t.size}px sans-serif`;
    ctx.textAlign = t.anchor === 'end' ? 'right' : 'left';
    ctx.fillText(t.text, t.x, t.y);
  }
  return canvas;
}
