// The analysis views' drawing kit: matrix canvases and their hover, the readout line, sizes, legend swatches and
// colour limits. A leaf: it imports webview/common and src/shared only, never a view or the lens state.
import { cellAt } from '../../../src/shared/hover';
import { formatValue } from '../../../src/shared/format';
import type { ProtocolToken } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { cssRgb, type Rgb } from '../../common/colors';
import { robustRange, type Range } from '../../../src/shared/value-range';
import { el } from '../../common/dom';
import { wordLabels } from '../../common/figure-labels';
import { paintRamp } from '../../common/legend-bar';
import { axisFrame, MATRIX_AXES } from '../../common/matrix-axes';
import { paintInto } from '../../common/paint-canvas';

/** Token k as the readouts name it: a special's text, a piece's label, or "#k" past the end. */
export function tokenText(tokens: readonly ProtocolToken[], k: number): string {
  const t = tokens[k];
  return t ? (t.special ? t.text : pieceLabel(t.text)) : `#${k}`;
}

/** A new canvas showing `[rows, cols]` (one pixel per cell, CSS-scaled to `px` wide). */
export function matrixCanvas(
  id: string,
  values: Float32Array,
  rows: number,
  cols: number,
  range: Range,
  lut: Uint8ClampedArray,
  px: number,
  label: string,
): HTMLCanvasElement {
  const c = el('canvas', { id, class: 'analysis-canvas', role: 'img', tabindex: '0', 'aria-label': label });
  paintInto(c, values, rows, cols, range, lut);
  c.style.width = `${px}px`;
  c.style.height = `${Math.round((px * rows) / cols)}px`;
  return c;
}

/** A matrix canvas of the text's tokens with their words on both axes (word starts, thinned to fit its size). */
export function withAxes(c: HTMLCanvasElement, n: number, text: string, tokens: readonly ProtocolToken[]): HTMLElement {
  const px = parseFloat(c.style.width) || c.width;
  // A map of other rows than the text's tokens is labelled by row number alone.
  if (tokens.length !== n) {
    const numbers = Array.from({ length: n }, (_, k) => `#${k}`);
    return axisFrame(c, numbers, numbers, px);
  }
  const pieces = tokens.map((_, k) => tokenText(tokens, k));
  return axisFrame(c, wordLabels(text, tokens), pieces, px);
}

/** The colour bar of a map: its lower limit, the ramp, its upper limit (as the main panel's legend). */
export function colourBar(range: Range, lut: Uint8ClampedArray, what = ''): HTMLElement {
  const bar = el('canvas', { width: '256', height: '1', class: 'legend-ramp', 'aria-hidden': 'true' });
  paintRamp(bar, lut);
  const lo = `${range.percentile && (range.signed || range.min > 0) ? '≤ ' : ''}${range.signed ? `−${formatValue(range.max)}` : formatValue(range.min)}`;
  const hi = `${range.percentile ? '≥ ' : ''}${range.signed ? '+' : ''}${formatValue(range.max)}`;
  return el('div', { class: 'legend analysis-legend' }, [
    el('span', { class: 'legend-scale' }, [el('span', {}, [lo]), bar, el('span', {}, [hi])]),
    ...(what ? [el('span', { class: 'meta' }, [what])] : []),
  ]);
}

/** A matrix canvas (or a framed one) with its caption under it. */
export function figure(c: HTMLElement, caption: string): HTMLElement {
  return el('figure', { class: 'analysis-fig' }, [c, el('figcaption', { class: 'meta' }, [caption])]);
}

/** Calls `at(i, j)` with the square-matrix cell under the pointer. */
export function onCell(c: HTMLCanvasElement, n: number, at: (i: number, j: number) => void): void {
  c.addEventListener('mousemove', (e) => {
    const r = c.getBoundingClientRect();
    const cell = cellAt(e.clientX - r.left, e.clientY - r.top, r.width, n);
    if (cell) at(cell.i, cell.j);
  });
}

/** Shows `text` in the line under the view. */
export function readout(text: string): void {
  const r = document.getElementById('analysis-readout');
  if (r) r.textContent = text;
}

/** Side in CSS pixels of one of `parts` maps of n × n cells across the panel, each with its axis labels. */
export function sidePx(n: number, parts: number): number {
  const avail = Math.max(180, Math.min(document.body.clientWidth - 40, 1400));
  const axes = MATRIX_AXES.left + 16;
  // In a narrow panel, two maps a row at a readable size rather than all of them in a row as thumbnails.
  const per = avail / parts - axes < 160 && parts > 2 ? avail / 2 : avail / parts;
  // No taller than the page less its toolbar: one map alone fills the width of a side panel, not more.
  return Math.max(Math.min(n * 4, 120), Math.min(Math.floor(per) - axes - 12, window.innerHeight - 180));
}

/** A legend entry: a colour square and its words. */
export function swatch(rgb: Rgb, text: string): HTMLElement {
  const s = el('span', { class: 'swatch' });
  s.style.backgroundColor = cssRgb(rgb);
  return el('span', { class: 'legend-item' }, [s, text]);
}

/**
 * Robust limits shared by the maps of one figure (equal colours mean equal values across them): at long
 * lengths a 0-to-max ramp leaves all but the few largest cells at the page colour.
 */
export function jointLimits(maps: readonly Float32Array[], signed: boolean): Range {
  const [only] = maps;
  if (maps.length === 1 && only) return robustRange(only, signed);
  const all = new Float32Array(maps.reduce((a, m) => a + m.length, 0));
  maps.reduce((at, m) => (all.set(m, at), at + m.length), 0);
  return robustRange(all, signed);
}

/** A caption's limits: "0 … 0.012 (99th pct of 0.81)" or "±0.5". */
export function limitsText(r: Range): string {
  const ends = r.signed ? `±${formatValue(r.max)}` : `0 … ${formatValue(r.max)}`;
  return r.percentile && r.exact
    ? `${ends}, ${r.percentile}th percentile; data to ${formatValue(r.signed ? Math.max(-r.exact.min, r.exact.max) : r.exact.max)}`
    : ends;
}

/** A LUT of `colour(t)` for t from 0 to 1 (palettes that are not one of the heatmap ramps). */
export function paletteLut(colour: (t: number) => Rgb): Uint8ClampedArray {
  const lut = new Uint8ClampedArray(256 * 4);
  for (let k = 0; k < 256; k++) lut.set([...colour(k / 255), 255], k * 4);
  return lut;
}
