// The Line view as a figure: the two columns of words and the lines between them, each line a stroke with its
// opacity, laid out in points at a chosen width — SVG with vector text and lines, or a canvas for PNG from the same
// layout. A figure cannot scroll: it holds at most FIGURE_ROWS rows (all of them when there are no more, else the
// rows on screen), the lines among them as the view draws them, and its caption says which rows it shows.
// Pure (no DOM): runs under node for tests; ./line-figure-canvas.ts draws the same layout for PNG.
import { markupText } from '../../../src/shared/markup-text';
import { MIN_FONT_PT, PAD, POINTS_PER_CM, textWidth, TITLE_PT, titleTexts, wrapText, type FigureText } from '../../common/figure';
import { clipLabel, levelAlpha, linesPerWord, linesToDraw, type OpacityScale } from './line-view-model';

/** Rows a figure holds: at 7 pt a row, 60 rows fill a page's height at 8 cm width. */
export const FIGURE_ROWS = 60;
const ROW_PT = MIN_FONT_PT + 2.5;
const LABEL_CHARS = 18;

export interface LineFigureSpec {
  values: Float32Array;
  n: number;
  labels: readonly string[];
  scale: OpacityScale;
  /** The rows on screen, [first, last): the figure's rows when there are more than FIGURE_ROWS. */
  window: { first: number; last: number };
  title: string;
  caption: string;
  colours: { text: string; pos: string; neg: string };
  widthCm: number;
  dpi: number;
}

interface Stroke {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  alpha: number;
  colour: string;
}
export interface LineFigureLayout {
  width: number;
  height: number;
  rows: { first: number; last: number };
  strokes: Stroke[];
  labels: FigureText[];
}

/** The rows a figure shows: all, or FIGURE_ROWS of them around the window on screen. */
export function figureRows(n: number, window: { first: number; last: number }): { first: number; last: number } {
  if (n <= FIGURE_ROWS) return { first: 0, last: n };
  const first = Math.max(0, Math.min(window.first, n - 1));
  return { first, last: Math.max(first + 1, Math.min(n, window.last, first + FIGURE_ROWS)) };
}

export function layoutLineFigure(spec: LineFigureSpec): LineFigureLayout {
  const width = spec.widthCm * POINTS_PER_CM;
  const rows = figureRows(spec.n, spec.window);
  const shown = rows.last - rows.first;
  const labels: FigureText[] = [];
  const title = titleTexts(spec.title, width);
  labels.push(...title.texts);
  // The column heads sit where a next title line would.
  let y = title.bottom + TITLE_PT;
  labels.push({ x: PAD, y: y + 1, text: 'query', size: MIN_FONT_PT, anchor: 'start', bold: true });
  labels.push({ x: width - PAD, y: y + 1, text: 'key', size: MIN_FONT_PT, anchor: 'end', bold: true });
  const top = y + 5;
  const names = spec.labels.slice(rows.first, rows.last).map((t) => clipLabel(t, LABEL_CHARS));
  const colW = Math.min(width * 0.3, Math.max(...names.map((t) => textWidth(t, MIN_FONT_PT)), textWidth('abc', MIN_FONT_PT)) + 4);
  const rowY = (k: number) => top + (k - rows.first + 0.5) * ROW_PT;
  names.forEach((t, k) => {
    const yy = rowY(rows.first + k) + MIN_FONT_PT * 0.35;
    labels.push({ x: PAD + colW - 2, y: yy, text: t, size: MIN_FONT_PT, anchor: 'end' });
    labels.push({ x: width - PAD - colW + 2, y: yy, text: t, size: MIN_FONT_PT, anchor: 'start' });
  });
  // The lines the view draws for these rows, kept where both ends are in the figure.
  const { pairs } = linesToDraw(spec.values, spec.n, rows, spec.scale, undefined, linesPerWord(spec.scale.signed || !!spec.scale.rowMax));
  const strokes: Stroke[] = [];
  const [x1, x2] = [PAD + colW + 3, width - PAD - colW - 3];
  pairs.forEach((bySign, level) =>
    bySign.forEach((ij, sign) => {
      for (let p = 0; p < ij.length; p += 2) {
        const [i, j] = [ij[p]!, ij[p + 1]!];
        if (i < rows.first || i >= rows.last || j < rows.first || j >= rows.last) continue;
        strokes.push({ x1, y1: rowY(i), x2, y2: rowY(j), alpha: levelAlpha(level), colour: sign ? spec.colours.neg : spec.colours.pos });
      }
    }),
  );
  y = top + shown * ROW_PT + 6;
  const partial = rows.first > 0 || rows.last < spec.n;
  const note = partial
    ? ` Rows ${rows.first}–${rows.last - 1} of ${spec.n} (those on screen); lines to words outside them are left out.`
    : '';
  for (const line of wrapText(`${spec.caption}${note}`, width - 2 * PAD, MIN_FONT_PT)) {
    y += MIN_FONT_PT + 1.5;
    labels.push({ x: PAD, y, text: line, size: MIN_FONT_PT, anchor: 'start' });
  }
  return { width, height: y + PAD, rows, strokes, labels };
}

const num = (v: number) => Number(v.toFixed(2));

export function lineFigureSvg(spec: LineFigureSpec, background: string): string {
  const l = layoutLineFigure(spec);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(l.width)}pt" height="${num(l.height)}pt" viewBox="0 0 ${num(l.width)} ${num(l.height)}">`,
    `<rect width="100%" height="100%" fill="${background}"/>`,
    `<g stroke-width="0.6" stroke-linecap="round">`,
    ...l.strokes.map(
      (s) =>
        `<line x1="${num(s.x1)}" y1="${num(s.y1)}" x2="${num(s.x2)}" y2="${num(s.y2)}" stroke="${s.colour}" stroke-opacity="${num(s.alpha)}"/>`,
    ),
    `</g>`,
    `<g font-family="sans-serif" fill="${spec.colours.text}">`,
    ...l.labels.map(
      (t) =>
        `<text x="${num(t.x)}" y="${num(t.y)}" font-size="${t.size}"${t.anchor === 'end' ? ' text-anchor="end"' : ''}${t.bold ? ' font-weight="bold"' : ''}>${markupText(t.text)}</text>`,
    ),
    `</g>`,
    `</svg>`,
  ];
  return out.join('\n');
}
