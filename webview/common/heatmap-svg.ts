// A heatmap as an SVG document (the SVG export): cell rectangles in the same colours the canvas paints. Pure: no
// DOM, runs under node for tests.
import { markupText } from '../../src/shared/markup-text';
import { colorOf, type Range, type Rgb } from './colors';

function hex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** Labels are tokens: besides markup, they may hold characters XML 1.0 forbids (NUL, U+FFFE), replaced visibly. */
const escapeXml = markupText;

export interface SvgOptions {
  /** Side of one cell in SVG units (default: fits ~512 units). */
  cell?: number;
  title?: string;
  /** Row/column labels (tokens), drawn when the cells are big enough to read them. */
  rowLabels?: string[];
  colLabels?: string[];
}

/**
 * A heatmap as SVG: one <rect> per run of equal colour in a row (so a 512×512 map stays a few MB), a title,
 * and token labels when cells are ≥ 8 units. `values` is `[rows, cols]` row-major.
 */
export function heatmapSvg(
  values: Float32Array,
  rows: number,
  cols: number,
  range: Range,
  lut: Uint8ClampedArray,
  opts: SvgOptions = {},
): string {
  if (values.length !== rows * cols) throw new RangeError(`heatmapSvg: ${values.length} values for ${rows}×${cols}`);
  const cell = opts.cell ?? Math.max(1, Math.floor(512 / Math.max(rows, cols)));
  const labels = cell >= 8 && (opts.rowLabels || opts.colLabels);
  const margin = labels ? 80 : 0;
  const top = (opts.title ? 20 : 0) + margin;
  const width = margin + cols * cell;
  const height = top + rows * cell;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" shape-rendering="crispEdges">`,
  ];
  if (opts.title)
    out.push(
      `<title>${escapeXml(opts.title)}</title><text x="0" y="14" font-family="sans-serif" font-size="12">${escapeXml(opts.title)}</text>`,
    );
  out.push(`<g transform="translate(${margin},${top})">`);
  const colour = (k: number) => hex(colorOf(values[k] ?? NaN, range, lut));
  for (let i = 0; i < rows; i++) {
    let j = 0;
    while (j < cols) {
      const c = colour(i * cols + j);
      let k = j + 1;
      while (k < cols && colour(i * cols + k) === c) k++;
      out.push(`<rect x="${j * cell}" y="${i * cell}" width="${(k - j) * cell}" height="${cell}" fill="${c}"/>`);
      j = k;
    }
  }
  out.push('</g>');
  if (labels) {
    const fs = Math.min(12, cell - 1);
    opts.rowLabels?.forEach((t, i) =>
      out.push(
        `<text x="${margin - 4}" y="${top + (i + 0.75) * cell}" font-family="monospace" font-size="${fs}" text-anchor="end">${escapeXml(t)}</text>`,
      ),
    );
    opts.colLabels?.forEach((t, j) => {
      const x = margin + (j + 0.75) * cell;
      out.push(
        `<text x="${x}" y="${top - 4}" font-family="monospace" font-size="${fs}" transform="rotate(-60 ${x} ${top - 4})">${escapeXml(t)}</text>`,
      );
    });
  }
  out.push('</svg>');
  return out.join('\n');
}
