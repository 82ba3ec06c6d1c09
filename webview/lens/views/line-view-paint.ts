// Paints the Line view's visible window into its canvas: the two columns of words and the lines between them,
// batched by opacity level (one stroke per level and sign). Only rows in the window are drawn, so a repaint at
// 500 tokens costs about what it costs at 50.
import { cssPixelContext } from '../../common/paint-canvas';
import {
  contentHeight,
  levelAlpha,
  lineAlpha,
  linesPerWord,
  linesToDraw,
  rowCentre,
  visibleWindow,
  type Focus,
  type LineLayout,
  type OpacityScale,
} from './line-view-model';

export interface LineScene {
  layout: LineLayout;
  values: Float32Array;
  labels: readonly string[];
  scale: OpacityScale;
  /** Canvas size in CSS px. */
  width: number;
  height: number;
  /** Width of each word column; lines run between them. */
  colW: number;
  colours: { text: string; dim: string; pos: string; neg: string; mark: string };
  font: string;
  /** Said in the middle of the canvas when no line is visible. */
  empty: string;
}

export interface PaintStats {
  ms: number;
  lines: number;
  first: number;
  last: number;
}

export function paintLines(canvas: HTMLCanvasElement, s: LineScene, scrollTop: number, focus: Focus | undefined): PaintStats {
  const t0 = performance.now();
  const ctx = cssPixelContext(canvas, s.width, s.height);
  if (!ctx) return { ms: 0, lines: 0, first: 0, last: 0 };
  ctx.clearRect(0, 0, s.width, s.height);
  const { layout, values, labels } = s;
  const n = layout.n;
  const win = visibleWindow(layout, scrollTop, s.height);
  const { pairs, count } = linesToDraw(values, n, win, s.scale, focus, linesPerWord(s.scale.signed || !!s.scale.rowMax));
  const x0 = s.colW + 6;
  const x1 = s.width - s.colW - 6;
  const y = (k: number) => rowCentre(layout, k) - scrollTop;
  // A hovered word's few lines a little thicker: faint weights still read at 0.1 opacity.
  ctx.lineWidth = focus ? 2 : 1.5;
  pairs.forEach((bySign, level) => {
    bySign.forEach((ij, sign) => {
      if (!ij.length) return;
      ctx.globalAlpha = levelAlpha(level);
      ctx.strokeStyle = sign ? s.colours.neg : s.colours.pos;
      ctx.beginPath();
      for (let k = 0; k < ij.length; k += 2) {
        ctx.moveTo(x0, y(ij[k]!));
        ctx.lineTo(x1, y(ij[k + 1]!));
      }
      ctx.stroke();
    });
  });
  ctx.globalAlpha = 1;
  // The words: the focused one marked; with a focus, the other column's words as opaque as their lines.
  ctx.font = s.font;
  ctx.textBaseline = 'middle';
  const other = focus ? otherEndAlpha(values, n, focus, s.scale) : undefined;
  for (let k = win.first; k < win.last; k++) {
    const yk = y(k);
    const label = labels[k] ?? '';
    for (const side of ['query', 'key'] as const) {
      const x = side === 'query' ? s.colW : s.width - s.colW;
      const focused = focus?.side === side && focus.k === k;
      if (focused) {
        ctx.fillStyle = s.colours.mark;
        ctx.fillRect(side === 'query' ? 0 : x, yk - layout.rowH / 2, s.colW, layout.rowH);
      }
      const a = focus && focus.side !== side && other ? Math.max(0.3, Math.min(1, (other[k] ?? 0) * 1.5 + 0.3)) : 1;
      ctx.globalAlpha = focus && focus.side === side && !focused ? 0.45 : a;
      ctx.fillStyle = s.colours.text;
      ctx.textAlign = side === 'query' ? 'right' : 'left';
      ctx.fillText(label, side === 'query' ? x - 2 : x + 2, yk);
    }
  }
  ctx.globalAlpha = 1;
  if (!count) {
    ctx.fillStyle = s.colours.dim;
    ctx.textAlign = 'center';
    wrap(s.empty, s.width - 2 * s.colW - 24).forEach((line, k) => ctx.fillText(line, s.width / 2, s.height / 2 - 20 + k * 16));
  }
  return { ms: performance.now() - t0, lines: count, first: win.first, last: win.last };
}

/** Opacity of each word at the other end of a focus's lines (its line's weight; 0 where there is none). */
function otherEndAlpha(values: Float32Array, n: number, f: Focus, scale: OpacityScale): Float32Array {
  const out = new Float32Array(n);
  for (let o = 0; o < n; o++) {
    const v = f.side === 'query' ? values[f.k * n + o] : values[o * n + f.k];
    out[o] = lineAlpha(v ?? NaN, scale, f.side === 'query' ? f.k : o);
  }
  return out;
}

/** Words of `text` in lines of at most ~`px` wide (7 px a character is enough for a hint). */
function wrap(text: string, px: number): string[] {
  const max = Math.max(12, Math.floor(px / 7));
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line && (line + ' ' + w).length > max) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  return line ? [...lines, line] : lines;
}

/** Scroll height of the content (the spacer under the sticky canvas makes up the rest). */
export function spacerHeight(s: LineScene): number {
  return Math.max(0, contentHeight(s.layout) - s.height);
}
