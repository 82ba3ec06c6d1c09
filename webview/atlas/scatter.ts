// The atlas scatter: one point per head at (x metric, y metric), axes with ticks and titles, painted on a base
// canvas; the hovered and the selected head are drawn on an overlay canvas above it, so a hover repaints only that.
import type { AtlasMetric } from '../../src/shared/atlas';
import { cssPixelContext } from '../common/paint-canvas';
import { linearScale, METRIC_LABELS, nearestPoint, type AtlasRow, type LinearScale } from './atlas-model';

export interface ScatterChoice {
  x: AtlasMetric;
  y: AtlasMetric;
  colour: (r: AtlasRow, side: 'a' | 'b') => string;
}

const PAD = { left: 56, right: 16, top: 14, bottom: 42 };
const R = 4;

export class Scatter {
  readonly base = document.createElement('canvas');
  readonly overlay = document.createElement('canvas');
  private points: { x: number; y: number }[] = [];
  private size = { w: 0, h: 0 };

  constructor() {
    this.base.className = 'atlas-scatter-base';
    this.overlay.className = 'atlas-scatter-overlay';
    this.base.setAttribute('role', 'img');
  }

  /** Paints every head; returns nothing: `headAt` and `mark` use the positions it kept. */
  paint(rows: readonly AtlasRow[], paired: boolean, c: ScatterChoice, width: number, height: number): void {
    this.size = { w: width, h: height };
    const ctx = cssPixelContext(this.base, width, height, true);
    cssPixelContext(this.overlay, width, height, true);
    if (!ctx) return;
    const style = getComputedStyle(document.body);
    const fg = style.getPropertyValue('--vscode-foreground').trim() || '#444';
    const grid = style.getPropertyValue('--vscode-editorWidget-border').trim() || 'rgba(128,128,128,0.3)';
    const font = style.getPropertyValue('--vscode-font-family').trim() || 'sans-serif';
    const xs = rows.flatMap((r) => [r.a.metrics[c.x], paired ? r.b?.metrics[c.x] : undefined]).filter((v): v is number => v !== undefined);
    const ys = rows.flatMap((r) => [r.a.metrics[c.y], paired ? r.b?.metrics[c.y] : undefined]).filter((v): v is number => v !== undefined);
    const sx = linearScale(xs, PAD.left, width - PAD.right);
    const sy = linearScale(ys, height - PAD.bottom, PAD.top);
    ctx.clearRect(0, 0, width, height);
    this.axes(ctx, sx, sy, c, { fg, grid, font, width, height });
    this.points = rows.map((r) => ({ x: sx.at(r.a.metrics[c.x] ?? NaN), y: sy.at(r.a.metrics[c.y] ?? NaN) }));
    // Where each head is drawn (CSS pixels), for tests that point at one.
    this.base.dataset.points = JSON.stringify(this.points.map((p) => [Math.round(p.x), Math.round(p.y)]));
    if (paired) {
      // Arrows from the first atlas's place of each head to the second's: the heads that moved are the long ones.
      ctx.lineWidth = 1;
      rows.forEach((r, k) => {
        const p = this.points[k]!;
        const bx = r.b?.metrics[c.x],
          by = r.b?.metrics[c.y];
        if (bx === undefined || by === undefined || !Number.isFinite(p.x + p.y)) return;
        arrow(ctx, p.x, p.y, sx.at(bx), sy.at(by), c.colour(r, 'b'));
      });
    }
    rows.forEach((r, k) => {
      const p = this.points[k]!;
      if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) return;
      ctx.beginPath();
      ctx.arc(p.x, p.y, R, 0, 2 * Math.PI);
      ctx.fillStyle = c.colour(r, 'a');
      ctx.fill();
    });
  }

  /** The head under (x, y) in CSS pixels, as an index into the rows painted; -1 for none. */
  headAt(x: number, y: number): number {
    return nearestPoint(this.points, x, y, 8);
  }

  /** The overlay alone: rings round the hovered and the selected head. */
  mark(hovered: number, selected: number): void {
    const ctx = cssPixelContext(this.overlay, this.size.w, this.size.h);
    if (!ctx) return;
    ctx.clearRect(0, 0, this.size.w, this.size.h);
    const fg = getComputedStyle(document.body).getPropertyValue('--vscode-focusBorder').trim() || '#0078d4';
    for (const [k, width] of [
      [selected, 2.5],
      [hovered, 1.5],
    ] as const) {
      const p = this.points[k];
      if (!p || !Number.isFinite(p.x + p.y)) continue;
      ctx.beginPath();
      ctx.arc(p.x, p.y, R + 4, 0, 2 * Math.PI);
      ctx.strokeStyle = fg;
      ctx.lineWidth = width;
      ctx.stroke();
    }
  }

  private axes(
    ctx: CanvasRenderingContext2D,
    sx: LinearScale,
    sy: LinearScale,
    c: ScatterChoice,
    s: { fg: string; grid: string; font: string; width: number; height: number },
  ): void {
    ctx.font = `11px ${s.font}`;
    ctx.fillStyle = s.fg;
    ctx.strokeStyle = s.grid;
    ctx.lineWidth = 1;
    const fmt = (v: number) => String(Number(v.toPrecision(3)));
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (const t of sx.ticks) {
      const x = Math.round(sx.at(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, PAD.top);
      ctx.lineTo(x, s.height - PAD.bottom + 4);
      ctx.stroke();
      ctx.fillText(fmt(t), x, s.height - PAD.bottom + 6);
    }
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const t of sy.ticks) {
      const y = Math.round(sy.at(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(PAD.left - 4, y);
      ctx.lineTo(s.width - PAD.right, y);
      ctx.stroke();
      ctx.fillText(fmt(t), PAD.left - 6, y);
    }
    ctx.font = `12px ${s.font}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillText(METRIC_LABELS[c.x], (PAD.left + s.width - PAD.right) / 2, s.height - 4);
    ctx.save();
    ctx.translate(14, (PAD.top + s.height - PAD.bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = 'middle';
    ctx.fillText(METRIC_LABELS[c.y], 0, 0);
    ctx.restore();
  }
}

function arrow(ctx: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number, colour: string): void {
  const len = Math.hypot(x1 - x0, y1 - y0);
  if (!(len > 1)) return;
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.globalAlpha = 0.7;
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.stroke();
  const a = Math.atan2(y1 - y0, x1 - x0),
    h = Math.min(7, len / 2);
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - h * Math.cos(a - 0.4), y1 - h * Math.sin(a - 0.4));
  ctx.lineTo(x1 - h * Math.cos(a + 0.4), y1 - h * Math.sin(a + 0.4));
  ctx.closePath();
  ctx.fill();
  ctx.globalAlpha = 1;
}
