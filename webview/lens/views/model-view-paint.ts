// Paints the Model view's visible layer rows: each thumbnail copied (scaled, unsmoothed) from its layer's
// offscreen strip, a grey square where a layer is still loading, the labels, the current head outlined and
// the hovered one marked. Returns the time it took in ms.
import { cssPixelContext } from '../../common/paint-canvas';
import type { Range } from '../../../src/shared/value-range';
import { thumbOrigin, visibleLayers, type GridGeometry } from './model-view-model';

/** One fetched layer, painted once: heads' m × m maps stacked vertically ([heads · m, m]). */
export interface LayerStrip {
  canvas: HTMLCanvasElement;
  cells: number;
  heads: number;
  /** The mapped values painted (for export) and the range and table they were painted with. */
  values: Float32Array;
  range: Range;
  lut: Uint8ClampedArray;
}

export interface GridScene {
  g: GridGeometry;
  layers: readonly number[];
  width: number;
  height: number;
  strips: (li: number) => LayerStrip | undefined;
  current: { li: number; h: number };
  text: string;
  accent: string;
  empty: string;
  font: string;
}

export function paintGrid(canvas: HTMLCanvasElement, s: GridScene, scrollTop: number, hovered?: { li: number; h: number }): number {
  const t0 = performance.now();
  const ctx = cssPixelContext(canvas, s.width, s.height);
  if (!ctx) return 0;
  ctx.clearRect(0, 0, s.width, s.height);
  ctx.imageSmoothingEnabled = false;
  const { g } = s;
  const win = visibleLayers(g, scrollTop, s.height, 0);
  ctx.font = s.font;
  ctx.fillStyle = s.text;
  ctx.textBaseline = 'middle';
  for (let li = win.first; li < win.last; li++) {
    const strip = s.strips(li);
    const { y } = thumbOrigin(g, li, 0);
    const yy = y - scrollTop;
    ctx.textAlign = 'right';
    ctx.fillStyle = s.text;
    ctx.fillText(`L${s.layers[li]}`, g.labelW - 6, yy + g.thumb / 2);
    for (let head = 0; head < g.heads; head++) {
      const { x } = thumbOrigin(g, li, head);
      if (strip && head < strip.heads) {
        ctx.drawImage(strip.canvas, 0, head * strip.cells, strip.cells, strip.cells, x, yy, g.thumb, g.thumb);
      } else {
        ctx.fillStyle = s.empty;
        ctx.fillRect(x, yy, g.thumb, g.thumb);
      }
    }
  }
  // Head labels stay on top, over the rows scrolled under them.
  ctx.clearRect(0, 0, s.width, g.labelH);
  ctx.fillStyle = s.text;
  ctx.textAlign = 'center';
  for (let head = 0; head < g.heads; head++) ctx.fillText(`H${head}`, thumbOrigin(g, 0, head).x + g.thumb / 2, g.labelH / 2);
  const outline = (at: { li: number; h: number } | undefined, colour: string, width: number) => {
    if (!at || at.li < win.first || at.li >= win.last) return;
    const { x, y } = thumbOrigin(g, at.li, at.h);
    if (y - scrollTop < g.labelH - 1) return;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.strokeRect(x - 1.5, y - scrollTop - 1.5, g.thumb + 3, g.thumb + 3);
  };
  outline(s.current, s.accent, 2);
  outline(hovered, s.text, 1);
  return performance.now() - t0;
}
