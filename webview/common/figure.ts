// A matrix as a figure for a paper: title, the map, whole-word axis labels, a colour bar with its range and a
// caption, laid out in points at a chosen width. One layout, two renderings: SVG text here (vector text, every
// matrix export of the panel) and a canvas for PNG (figure-canvas.ts). Pure: no DOM, runs under node for tests.
import { markupText } from '../../src/shared/markup-text';
import { formatValue } from '../../src/shared/format';
import { describeRange, type Rgb, type ThemeKind } from './colors';
import { LUT_SIZE, lutIndex, type Range } from '../../src/shared/value-range';
import { base64, palettePng } from './png-palette';
import { thinLabels } from './figure-labels';

/** Smallest text in a figure, in points: legible in print. Labels are thinned out rather than set smaller. */
export const MIN_FONT_PT = 7;
const LABEL_PT_MAX = 9;
/** A figure's title size and its margin, in points (every figure: maps, lines). */
export const TITLE_PT = 9;
export const PAD = 4;
const BAR_W = 8;
/** Average advance of a sans-serif character, as a share of the font size (for widths before any font exists). */
const CHAR_W = 0.56;

/**
 * The figure of one token × token map as a view paints it (the panel's heatmap, the HTML report's): `values` as
 * shown, its range and colours, the legend's line as the caption, the same labels on both axes.
 */
export function mapFigure(o: {
  size: { widthCm: number; dpi: number };
  theme: ThemeKind;
  values: Float32Array;
  n: number;
  range: Range;
  lut: Uint8ClampedArray;
  title: string;
  kind: string;
  labels?: readonly string[];
}): FigureSpec {
  const { size, n, labels } = o;
  return {
    ...size,
    theme: o.theme,
    values: o.values,
    rows: n,
    cols: n,
    range: o.range,
    lut: o.lut,
    title: o.title,
    caption: describeRange(o.range, o.kind),
    rowLabels: labels,
    colLabels: labels,
  };
}

/** A figure's title wrapped to its width, as bold lines from the top-left; `bottom`: the y under the last line. */
export function titleTexts(title: string, width: number): { texts: FigureText[]; bottom: number } {
  const lines = wrapText(title, width - 2 * PAD, TITLE_PT);
  const texts = lines.map((text, k): FigureText => ({
    x: PAD,
    y: PAD + TITLE_PT + k * (TITLE_PT + 2),
    text,
    size: TITLE_PT,
    anchor: 'start',
    bold: true,
  }));
  return { texts, bottom: PAD + lines.length * (TITLE_PT + 2) };
}

/** One map of a figure with several (Compare Heads): its values, rows × cols like the spec's, and its title. */
export interface FigurePanel {
  values: Float32Array;
  title: string;
}

export interface FigureSpec {
  values: Float32Array;
  rows: number;
  cols: number;
  /** Several maps on the spec's one colour range, side by side (`values` is then ignored), `panelColumns` a row;
   *  each map's rows labelled on its left and its columns over it. */
  panels?: readonly FigurePanel[];
  panelColumns?: number;
  range: Range;
  lut: Uint8ClampedArray;
  title: string;
  /** What the colours mean (the panel's legend line); wrapped under the map. */
  caption?: string;
  /** The caption's last sentence when the axes are not query × key tokens (the Patching grids); '' = none. */
  axesNote?: string;
  /** One label per row / column ('' = none: a word's later pieces); already whole words and cleaned. */
  rowLabels?: readonly string[];
  colLabels?: readonly string[];
  /** Figure width in centimetres and (PNG) dots per inch. */
  widthCm: number;
  dpi: number;
  theme: ThemeKind;
}

export interface FigureText {
  x: number;
  y: number;
  text: string;
  size: number;
  anchor: 'start' | 'end';
  /** Degrees, about (x, y). */
  rotate?: number;
  bold?: boolean;
}

export interface FigureLayout {
  /** Points (1/72 in). */
  width: number;
  height: number;
  background: string;
  foreground: string;
  map: { x: number; y: number; w: number; h: number };
  /** Every map (one unless the spec has panels), map = maps[0]. */
  maps: { x: number; y: number; w: number; h: number; values: Float32Array }[];
  bar: { x: number; y: number; width: number; height: number };
  texts: FigureText[];
  /** The label font size and which rows / columns carry a label. */
  labelPt: number;
  shownRows: number[];
  shownCols: number[];
}

export const POINTS_PER_CM = 72 / 2.54;

/** A text's width in points before any font exists (the average advance of a sans-serif character). */
export const textWidth = (s: string, pt: number) => [...s].length * pt * CHAR_W;

/** Greedy word wrap at an estimated width. */
export function wrapText(text: string, width: number, pt: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/)) {
    if (line && textWidth(`${line} ${w}`, pt) > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines;
}

/** The colour bar's tick labels, top to bottom: [position 0..1 from the bottom, text]. */
export function barTicks(range: Range): [number, string][] {
  if (range.rowLog) {
    const tenth = 1 - 1 / range.rowLog.decades;
    return [
      [1, 'row top'],
      [tenth, 'top ÷ 10'],
      [0, 'row floor'],
    ];
  }
  if (range.log) {
    const mid = Math.sqrt(range.min * range.max);
    return [
      [1, formatValue(range.max)],
      [0.5, formatValue(mid)],
      [0, `≤ ${formatValue(range.min)}`],
    ];
  }
  const clip = range.percentile ? true : false;
  const ticks: [number, string][] = [[1, `${clip ? '≥ ' : ''}${formatValue(range.max)}`]];
  if (range.signed) ticks.push([0.5, '0']);
  ticks.push([0, `${clip && range.signed ? '≤ ' : ''}${formatValue(range.min)}`]);
  return ticks;
}

/** Gap between the maps of a figure with panels, in points. */
const PANEL_GAP = 8;

/** Where everything goes, in points. */
export function layoutFigure(spec: FigureSpec): FigureLayout {
  const width = Math.max(2, spec.widthCm) * POINTS_PER_CM;
  const ticks = barTicks(spec.range);
  const barLabelW = Math.max(...ticks.map(([, t]) => textWidth(t, MIN_FONT_PT)));
  const barTotal = 6 + BAR_W + 3 + barLabelW;
  const panels = spec.panels ?? [{ values: spec.values, title: '' }];
  const perRow = Math.max(1, Math.min(panels.length, spec.panelColumns ?? panels.length));
  const panelRows = Math.ceil(panels.length / perRow);
  const panelTitleH = spec.panels ? MIN_FONT_PT + 3 : 0;
  const longest = (ls: readonly string[] | undefined) => (ls ? Math.max(0, ...ls.map((l) => [...l].length)) : 0);
  // The labels shown set the margins, the margins the map, the map the cells, the cells which labels fit:
  // a few rounds from "every label at 7 pt" settle it (the map only grows as labels drop out).
  const aspect = Math.min(1.5, Math.max(0.25, spec.rows / spec.cols));
  let labelPt = MIN_FONT_PT;
  let shownRows: number[] = spec.rowLabels ? spec.rowLabels.flatMap((l, i) => (l ? [i] : [])) : [];
  let shownCols: number[] = spec.colLabels ? spec.colLabels.flatMap((l, i) => (l ? [i] : [])) : [];
  let rowW = 0;
  let colH = 0;
  let size = 0;
  for (let pass = 0; pass < 4; pass++) {
    rowW = spec.rowLabels ? longest(shownRows.map((i) => spec.rowLabels?.[i] ?? '')) * labelPt * CHAR_W + 4 : 0;
    colH = spec.colLabels ? longest(shownCols.map((j) => spec.colLabels?.[j] ?? '')) * labelPt * CHAR_W + 4 : 0;
    size = Math.max(20, (width - 2 * PAD - barTotal - perRow * rowW - (perRow - 1) * PANEL_GAP) / perRow);
    labelPt = Math.max(MIN_FONT_PT, Math.min(LABEL_PT_MAX, Math.min(size / spec.cols, (aspect * size) / spec.rows) / 1.2));
    shownRows = spec.rowLabels ? thinLabels(spec.rowLabels, (aspect * size) / spec.rows, labelPt) : [];
    shownCols = spec.colLabels ? thinLabels(spec.colLabels, size / spec.cols, labelPt) : [];
  }
  // Square cells when the map is square; otherwise stretched within 1:4 … 3:2 so that a wide map stays a figure.
  const mapW = size;
  const mapH = aspect * size;
  const cellX = mapW / spec.cols;
  const cellY = mapH / spec.rows;
  const texts: FigureText[] = [];
  const title = titleTexts(spec.title, width);
  texts.push(...title.texts);
  const top = title.bottom + 4;
  const rowH = panelTitleH + colH + mapH + PANEL_GAP;
  const maps = panels.map((panel, k) => {
    const x = PAD + rowW + (k % perRow) * (rowW + mapW + PANEL_GAP);
    const y = top + Math.floor(k / perRow) * rowH + panelTitleH + colH;
    if (panel.title) texts.push({ x, y: y - colH - 3, text: panel.title, size: MIN_FONT_PT, anchor: 'start', bold: true });
    // Each map's rows labelled on its left and its columns over it: side by side, every map reads on its own.
    for (const i of shownRows)
      texts.push({ x: x - 3, y: y + (i + 0.5) * cellY + labelPt * 0.35, text: spec.rowLabels?.[i] ?? '', size: labelPt, anchor: 'end' });
    for (const j of shownCols)
      texts.push({
        x: x + (j + 0.5) * cellX + labelPt * 0.35,
        y: y - 3,
        text: spec.colLabels?.[j] ?? '',
        size: labelPt,
        anchor: 'start',
        rotate: -90,
      });
    return { x, y, w: mapW, h: mapH, values: panel.values };
  });
  const first = maps[0]!;
  const bar = { x: Math.max(...maps.map((m) => m.x)) + mapW + 6, y: first.y, width: BAR_W, height: mapH };
  for (const [at, t] of ticks)
    texts.push({ x: bar.x + BAR_W + 3, y: bar.y + (1 - at) * mapH + MIN_FONT_PT * 0.35, text: t, size: MIN_FONT_PT, anchor: 'start' });
  const caption = [spec.caption ?? '', spec.axesNote ?? labelNote(shownRows, spec.rowLabels)].filter((c) => c).join('. ');
  const captionLines = caption ? wrapText(caption, width - 2 * PAD, MIN_FONT_PT) : [];
  let y = top + (panelRows - 1) * rowH + panelTitleH + colH + mapH + 4;
  for (const line of captionLines) {
    y += MIN_FONT_PT + 1.5;
    texts.push({ x: PAD, y, text: line, size: MIN_FONT_PT, anchor: 'start' });
  }
  const dark = spec.theme === 'dark';
  return {
    width,
    height: y + PAD + 2,
    background: dark ? '#1e1e1e' : '#ffffff',
    foreground: dark ? '#e6e6e6' : '#1e1e1e',
    map: { x: first.x, y: first.y, w: first.w, h: first.h },
    maps,
    bar,
    texts,
    labelPt,
    shownRows,
    shownCols,
  };
}

/** The caption's last sentence: which labels are shown (every word, or a thinned set). */
export function labelNote(shownRows: readonly number[], rowLabels?: readonly string[]): string {
  const words = rowLabels?.filter((l) => l).length ?? 0;
  if (!words) return '';
  const shown = shownRows.length;
  return shown >= words
    ? 'Rows: queries, columns: keys; every word labelled.'
    : `Rows: queries, columns: keys; ${shown} of ${words} words labelled (at least a line apart).`;
}

export function hex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** The bar's colours, bottom to top: 64 steps of the table. */
export function barColours(lut: Uint8ClampedArray, steps = 64): string[] {
  return Array.from({ length: steps }, (_, k) => {
    const e = Math.round((k / (steps - 1)) * (LUT_SIZE - 1)) * 4;
    return hex([lut[e] ?? 0, lut[e + 1] ?? 0, lut[e + 2] ?? 0]);
  });
}

const num = (x: number) => String(Math.round(x * 100) / 100);

/** Past this many runs of equal colour the map is an embedded palette PNG rather than rectangles (file size). */
export const MAX_RECT_RUNS = 20_000;

/** The map's SVG: one rect per run of equal colour in a row (vector), or an embedded palette PNG when that is too many. */
function mapSvg(spec: FigureSpec, map: FigureLayout['maps'][number]): string[] {
  const { rows, cols } = spec;
  const idx = new Uint8Array(rows * cols);
  let runs = 0;
  for (let k = 0; k < idx.length; k++) {
    idx[k] = lutIndex(map.values[k] ?? NaN, spec.range);
    if (k % cols === 0 || idx[k] !== idx[k - 1]) runs++;
  }
  if (runs > MAX_RECT_RUNS) {
    const png = base64(palettePng(idx, cols, rows, spec.lut));
    return [
      `<image x="${num(map.x)}" y="${num(map.y)}" width="${num(map.w)}" height="${num(map.h)}" preserveAspectRatio="none" image-rendering="pixelated" style="image-rendering:pixelated" href="data:image/png;base64,${png}"/>`,
    ];
  }
  const out = [
    `<g transform="translate(${num(map.x)},${num(map.y)}) scale(${map.w / cols},${map.h / rows})" shape-rendering="crispEdges">`,
  ];
  const colour = (e: number) => hex([spec.lut[e * 4] ?? 0, spec.lut[e * 4 + 1] ?? 0, spec.lut[e * 4 + 2] ?? 0]);
  for (let i = 0; i < rows; i++) {
    let j = 0;
    while (j < cols) {
      const e = idx[i * cols + j] ?? 0;
      let k = j + 1;
      while (k < cols && idx[i * cols + k] === e) k++;
      out.push(`<rect x="${j}" y="${i}" width="${k - j}" height="1" fill="${colour(e)}"/>`);
      j = k;
    }
  }
  out.push('</g>');
  return out;
}

const svgOpen = (width: number, height: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${num(width / POINTS_PER_CM)}cm" height="${num(height / POINTS_PER_CM)}cm" viewBox="0 0 ${num(width)} ${num(height)}" font-family="Helvetica, Arial, sans-serif">`;

/** What a figure draws, in its own points (0, 0 top left): background, maps, bar, frames and texts. */
function figureBody(spec: FigureSpec, L: FigureLayout): string[] {
  for (const v of spec.panels?.map((p) => p.values) ?? [spec.values])
    if (v.length !== spec.rows * spec.cols) throw new RangeError(`figureSvg: ${v.length} values for ${spec.rows}×${spec.cols}`);
  const out: string[] = [`<rect width="${num(L.width)}" height="${num(L.height)}" fill="${L.background}"/>`];
  for (const m of L.maps) out.push(...mapSvg(spec, m));
  const steps = barColours(spec.lut);
  const h = L.bar.height / steps.length;
  out.push('<g shape-rendering="crispEdges">');
  steps.forEach((c, k) =>
    out.push(
      `<rect x="${num(L.bar.x)}" y="${num(L.bar.y + L.bar.height - (k + 1) * h)}" width="${L.bar.width}" height="${num(h + 0.05)}" fill="${c}"/>`,
    ),
  );
  out.push('</g>');
  for (const m of L.maps)
    out.push(
      `<rect x="${num(m.x)}" y="${num(m.y)}" width="${num(m.w)}" height="${num(m.h)}" fill="none" stroke="${L.foreground}" stroke-width="0.4"/>`,
    );
  out.push(`<g fill="${L.foreground}">`);
  for (const t of L.texts) {
    const rot = t.rotate ? ` transform="rotate(${t.rotate} ${num(t.x)} ${num(t.y)})"` : '';
    out.push(
      `<text x="${num(t.x)}" y="${num(t.y)}" font-size="${num(t.size)}"${t.anchor === 'end' ? ' text-anchor="end"' : ''}${t.bold ? ' font-weight="bold"' : ''}${rot}>${markupText(t.text)}</text>`,
    );
  }
  out.push('</g>');
  return out;
}

/** The figure as an SVG document: width and height in cm, drawn in points, text as text. */
export function figureSvg(spec: FigureSpec): string {
  const L = layoutFigure(spec);
  return [svgOpen(L.width, L.height), `<title>${markupText(spec.title)}</title>`, ...figureBody(spec, L), '</svg>'].join('\n');
}

/** Where figures placed side by side go (Compare Models: each side its own tokens, range and bar), in points. */
export function layoutFigureRow(
  specs: readonly FigureSpec[],
  title: string,
): { width: number; height: number; titleH: number; layouts: FigureLayout[]; xs: number[] } {
  const layouts = specs.map(layoutFigure);
  const titleH = title ? PAD + TITLE_PT + 4 : 0;
  const xs = layouts.map((_, k) => layouts.slice(0, k).reduce((a, l) => a + l.width, 0));
  return {
    width: layouts.reduce((a, l) => a + l.width, 0),
    height: titleH + Math.max(0, ...layouts.map((l) => l.height)),
    titleH,
    layouts,
    xs,
  };
}

/** Figures side by side under one title, as one SVG document (each figure keeps its own coordinates). */
export function figureRowSvg(specs: readonly FigureSpec[], title: string, theme: ThemeKind): string {
  const R = layoutFigureRow(specs, title);
  const dark = theme === 'dark';
  const out = [
    svgOpen(R.width, R.height),
    `<title>${markupText(title)}</title>`,
    `<rect width="100%" height="100%" fill="${dark ? '#1e1e1e' : '#ffffff'}"/>`,
  ];
  if (title)
    out.push(
      `<text x="${PAD}" y="${PAD + TITLE_PT}" font-size="${TITLE_PT}" font-weight="bold" fill="${dark ? '#e6e6e6' : '#1e1e1e'}">${markupText(title)}</text>`,
    );
  specs.forEach((spec, k) => {
    const L = R.layouts[k]!;
    out.push(`<g transform="translate(${num(R.xs[k]!)},${num(R.titleH)})">`, ...figureBody(spec, L), '</g>');
  });
  out.push('</svg>');
  return out.join('\n');
}
