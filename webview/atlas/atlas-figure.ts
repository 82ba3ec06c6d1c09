// The atlas scatter as a figure for a paper: a title, the scatter with its axes (ticks, grid, titles), one point per
// head (and, for two atlases, an arrow per head from the first to the second), the legend and a caption, laid out in
// points at a chosen width. One layout, two renderings: SVG text here and a canvas for PNG (atlas-figure-canvas.ts).
// Pure: no DOM, runs under node for tests.
import { markupText } from '../../src/shared/markup-text';
import type { ThemeKind } from '../common/colors';
import { POINTS_PER_CM, wrapText } from '../common/figure';
import { linearScale } from './atlas-model';

const PAD = 6;
const TITLE_PT = 9;
const TEXT_PT = 7;
const AXIS_PT = 8;
const DOT_R = 2.2;
/** Average advance of a sans-serif character, as a share of the font size (as figure.ts estimates). */
const CHAR_W = 0.56;

export interface AtlasFigurePoint {
  /** The head's metrics on the two axes (NaN or undefined: not drawn). */
  x: number | undefined;
  y: number | undefined;
  /** Where the second atlas puts the same head (paired atlases): an arrow from (x, y) to here. */
  bx?: number;
  by?: number;
  /** A CSS colour; undefined: the figure's foreground. */
  colour?: string;
}

export interface AtlasFigureSpec {
  title: string;
  caption: string;
  xLabel: string;
  yLabel: string;
  points: readonly AtlasFigurePoint[];
  legendTitle: string;
  legend: readonly { colour: string; label: string }[];
  /** Figure width in centimetres and (PNG) dots per inch. */
  widthCm: number;
  dpi: number;
  theme: ThemeKind;
}

export interface FigureLine {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface AtlasFigureText {
  x: number;
  y: number;
  text: string;
  size: number;
  anchor: 'start' | 'middle' | 'end';
  bold?: boolean;
  /** Degrees about (x, y). */
  rotate?: number;
}

export interface AtlasFigureLayout {
  /** Points (1/72 in). */
  width: number;
  height: number;
  background: string;
  foreground: string;
  grid: string;
  plot: { x: number; y: number; w: number; h: number };
  gridLines: FigureLine[];
  dots: { x: number; y: number; r: number; colour: string }[];
  arrows: { from: [number, number]; to: [number, number]; head: [number, number][]; colour: string }[];
  chips: { x: number; y: number; r: number; colour: string }[];
  texts: AtlasFigureText[];
}

const textWidth = (s: string, pt: number) => [...s].length * pt * CHAR_W;

/** `hsl(h, s%, l%)` (the panel's layer colours) as `#rrggbb`, which every SVG reader knows; other colours as given. */
export function hexColour(c: string): string {
  const m = /^hsl\(\s*([\d.]+),\s*([\d.]+)%,\s*([\d.]+)%\s*\)$/.exec(c);
  if (!m) return c;
  const [h, s, l] = [Number(m[1]) / 360, Number(m[2]) / 100, Number(m[3]) / 100];
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s,
    p = 2 * l - q;
  const channel = (t: number) => {
    t = (t + 1) % 1;
    const v = t < 1 / 6 ? p + (q - p) * 6 * t : t < 1 / 2 ? q : t < 2 / 3 ? p + (q - p) * (2 / 3 - t) * 6 : p;
    return Math.round(v * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(h + 1 / 3)}${channel(h)}${channel(h - 1 / 3)}`;
}
const fmt = (v: number) => String(Number(v.toPrecision(3)));

/** Where everything goes, in points. */
export function layoutAtlasFigure(spec: AtlasFigureSpec): AtlasFigureLayout {
  const dark = spec.theme === 'dark';
  const foreground = dark ? '#e6e6e6' : '#1e1e1e';
  const width = Math.max(4, spec.widthCm) * POINTS_PER_CM;
  const texts: AtlasFigureText[] = [];
  const titleLines = wrapText(spec.title, width - 2 * PAD, TITLE_PT);
  titleLines.forEach((t, k) =>
    texts.push({ x: PAD, y: PAD + TITLE_PT * (k + 1) + 2 * k, text: t, size: TITLE_PT, anchor: 'start', bold: true }),
  );
  const top = PAD + titleLines.length * (TITLE_PT + 2) + 6;
  const finite = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);
  const xs = spec.points.flatMap((p) => [p.x, p.bx]).filter(finite);
  const ys = spec.points.flatMap((p) => [p.y, p.by]).filter(finite);
  // Scales over pixels 0…1 first: the tick labels set the left margin, the margin the plot.
  const sy0 = linearScale(ys, 1, 0);
  const yTickW = Math.max(...sy0.ticks.map((t) => textWidth(fmt(t), TEXT_PT)));
  const left = PAD + AXIS_PT + 4 + yTickW + 4;
  const plotW = width - left - PAD - 4;
  const plotH = Math.round(plotW * 0.62);
  const plot = { x: left, y: top, w: plotW, h: plotH };
  const sx = linearScale(xs, plot.x, plot.x + plot.w);
  const sy = linearScale(ys, plot.y + plot.h, plot.y);
  const gridLines: FigureLine[] = [];
  for (const t of sx.ticks) {
    const x = sx.at(t);
    gridLines.push({ x1: x, y1: plot.y, x2: x, y2: plot.y + plot.h });
    texts.push({ x, y: plot.y + plot.h + TEXT_PT + 2, text: fmt(t), size: TEXT_PT, anchor: 'middle' });
  }
  for (const t of sy.ticks) {
    const y = sy.at(t);
    gridLines.push({ x1: plot.x, y1: y, x2: plot.x + plot.w, y2: y });
    texts.push({ x: plot.x - 3, y: y + TEXT_PT * 0.35, text: fmt(t), size: TEXT_PT, anchor: 'end' });
  }
  texts.push({ x: plot.x + plot.w / 2, y: plot.y + plot.h + TEXT_PT + AXIS_PT + 6, text: spec.xLabel, size: AXIS_PT, anchor: 'middle' });
  texts.push({ x: PAD + AXIS_PT * 0.8, y: plot.y + plot.h / 2, text: spec.yLabel, size: AXIS_PT, anchor: 'middle', rotate: -90 });
  const colourOf = (c: string | undefined) => (c ? hexColour(c) : foreground);
  const dots: AtlasFigureLayout['dots'] = [];
  const arrows: AtlasFigureLayout['arrows'] = [];
  for (const p of spec.points) {
    if (!finite(p.x) || !finite(p.y)) continue;
    const [x, y] = [sx.at(p.x), sy.at(p.y)];
    if (finite(p.bx) && finite(p.by)) {
      const [x2, y2] = [sx.at(p.bx), sy.at(p.by)];
      const len = Math.hypot(x2 - x, y2 - y);
      if (len > 0.5) {
        const a = Math.atan2(y2 - y, x2 - x),
          h = Math.min(3.5, len / 2);
        arrows.push({
          from: [x, y],
          to: [x2, y2],
          head: [
            [x2, y2],
            [x2 - h * Math.cos(a - 0.4), y2 - h * Math.sin(a - 0.4)],
            [x2 - h * Math.cos(a + 0.4), y2 - h * Math.sin(a + 0.4)],
          ],
          colour: colourOf(p.colour),
        });
      }
    }
    dots.push({ x, y, r: DOT_R, colour: colourOf(p.colour) });
  }
  // The legend under the axis title: its title, then chip and label per entry, wrapped at the width.
  const chips: AtlasFigureLayout['chips'] = [];
  let ly = plot.y + plot.h + TEXT_PT + AXIS_PT + 6 + TEXT_PT + 8;
  let lx = PAD;
  if (spec.legend.length) {
    texts.push({ x: lx, y: ly, text: `${spec.legendTitle}:`, size: TEXT_PT, anchor: 'start' });
    lx += textWidth(`${spec.legendTitle}:`, TEXT_PT) + 6;
    for (const e of spec.legend) {
      const w = 2 * DOT_R + 3 + textWidth(e.label, TEXT_PT) + 8;
      if (lx + w > width - PAD) {
        lx = PAD;
        ly += TEXT_PT + 4;
      }
      chips.push({ x: lx + DOT_R, y: ly - TEXT_PT * 0.35, r: DOT_R + 0.6, colour: hexColour(e.colour) });
      texts.push({ x: lx + 2 * DOT_R + 3, y: ly, text: e.label, size: TEXT_PT, anchor: 'start' });
      lx += w;
    }
    ly += 4;
  }
  for (const line of wrapText(spec.caption, width - 2 * PAD, TEXT_PT)) {
    ly += TEXT_PT + 1.5;
    texts.push({ x: PAD, y: ly, text: line, size: TEXT_PT, anchor: 'start' });
  }
  return {
    width,
    height: ly + PAD + 2,
    background: dark ? '#1e1e1e' : '#ffffff',
    foreground,
    grid: dark ? '#4a4a4a' : '#d6d6d6',
    plot,
    gridLines,
    dots,
    arrows,
    chips,
    texts,
  };
}

const num = (x: number) => String(Math.round(x * 100) / 100);

/** The figure as an SVG document: width and height in cm, drawn in points, text as text. */
export function atlasFigureSvg(spec: AtlasFigureSpec): string {
  const L = layoutAtlasFigure(spec);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(L.width / POINTS_PER_CM)}cm" height="${num(L.height / POINTS_PER_CM)}cm" viewBox="0 0 ${num(L.width)} ${num(L.height)}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${markupText(spec.title)}</title>`,
    `<rect width="${num(L.width)}" height="${num(L.height)}" fill="${L.background}"/>`,
    `<g stroke="${L.grid}" stroke-width="0.4">`,
    ...L.gridLines.map((l) => `<line x1="${num(l.x1)}" y1="${num(l.y1)}" x2="${num(l.x2)}" y2="${num(l.y2)}"/>`),
    '</g>',
    `<rect x="${num(L.plot.x)}" y="${num(L.plot.y)}" width="${num(L.plot.w)}" height="${num(L.plot.h)}" fill="none" stroke="${L.foreground}" stroke-width="0.5"/>`,
    '<g stroke-width="0.5" opacity="0.75">',
    ...L.arrows.flatMap((a) => [
      `<line x1="${num(a.from[0])}" y1="${num(a.from[1])}" x2="${num(a.to[0])}" y2="${num(a.to[1])}" stroke="${markupText(a.colour)}"/>`,
      `<polygon points="${a.head.map(([x, y]) => `${num(x)},${num(y)}`).join(' ')}" fill="${markupText(a.colour)}"/>`,
    ]),
    '</g>',
    '<g class="heads">',
    ...L.dots.map((d) => `<circle cx="${num(d.x)}" cy="${num(d.y)}" r="${d.r}" fill="${markupText(d.colour)}"/>`),
    '</g>',
    ...L.chips.map((c) => `<circle cx="${num(c.x)}" cy="${num(c.y)}" r="${num(c.r)}" fill="${markupText(c.colour)}"/>`),
    `<g fill="${L.foreground}">`,
    ...L.texts.map((t) => {
      const anchor = t.anchor === 'start' ? '' : ` text-anchor="${t.anchor}"`;
      const rot = t.rotate ? ` transform="rotate(${t.rotate} ${num(t.x)} ${num(t.y)})"` : '';
      return `<text x="${num(t.x)}" y="${num(t.y)}" font-size="${num(t.size)}"${anchor}${t.bold ? ' font-weight="bold"' : ''}${rot}>${markupText(t.text)}</text>`;
    }),
    '</g>',
    '</svg>',
  ];
  return out.join('\n');
}

/** A file name for the save dialog: the atlas, the axes, the format. */
export function atlasFigureName(name: string, x: string, y: string, format: 'png' | 'svg'): string {
  return `${`atlas-${name}-${x}-vs-${y}`.replace(/[^\w.-]+/g, '-').slice(0, 110)}.${format}`;
}
