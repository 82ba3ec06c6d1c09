// The flow graph as SVG markup: layers as columns (the state entering layer l at column l), the tokens that have
// edges as rows, an edge j→i of layer l from column l to l + 1 coloured by the term carrying most of its score and
// as wide as its effect. One drawing for the tab (with data-edge on each edge for hover and click) and the
// exported figure (with a title). Pure: a string, no DOM.
import { markupText } from '../../../src/shared/markup-text';
import { cssRgb } from '../../common/colors';
import type { TermName } from '../../../src/shared/kinds';
import type { FlowLayout } from './patching-model';
import { TERM_RGB } from './patching-model';

export interface FlowSvgOptions {
  /** One label per token (the row labels). */
  labels: readonly string[];
  /** The terms the model has, in the legend (default all three). */
  terms?: readonly TermName[];
  theme: 'light' | 'dark';
  /** Width in CSS pixels (or points, for a figure). */
  width: number;
  title?: string;
  /** Said under the legend (the threshold, the knockouts tried). */
  note?: string;
}

const ROW = 18;
const TOP = 22;
const FONT = 11;
const CHAR_W = 0.6;

/** The flow graph's SVG; `height` tells the caller how tall it came out. */
export function flowSvg(f: FlowLayout, o: FlowSvgOptions): { svg: string; width: number; height: number } {
  const fg = o.theme === 'dark' ? '#ddd' : '#222';
  const bg = o.theme === 'dark' ? '#1e1e1e' : '#ffffff';
  const grid = o.theme === 'dark' ? '#444' : '#ccc';
  const label = (t: number) => `${t} ${o.labels[t] ?? `#${t}`}`;
  const labelW = Math.ceil(Math.max(40, ...f.rows.map((t) => [...label(t)].length * FONT * CHAR_W)) + 10);
  const titleH = o.title ? 18 : 0;
  const colW = Math.max(40, (o.width - labelW - 16) / Math.max(1, f.layers));
  const x = (l: number) => labelW + 8 + l * colW;
  const y = (k: number) => titleH + TOP + k * ROW + ROW / 2;
  const bodyH = titleH + TOP + Math.max(1, f.rows.length) * ROW;
  const legendY = bodyH + 14;
  const height = legendY + (o.note ? 30 : 16);
  const parts: string[] = [];
  parts.push(`<rect x="0" y="0" width="${o.width}" height="${height}" fill="${bg}"/>`);
  if (o.title) parts.push(`<text x="4" y="13" font-size="12" font-weight="bold" fill="${fg}">${markupText(o.title)}</text>`);
  for (let l = 0; l <= f.layers; l++) {
    parts.push(`<line x1="${x(l)}" y1="${titleH + TOP - 4}" x2="${x(l)}" y2="${bodyH}" stroke="${grid}" stroke-width="1"/>`);
    if (l < f.layers)
      parts.push(`<text x="${x(l) + colW / 2}" y="${titleH + 14}" font-size="${FONT}" text-anchor="middle" fill="${fg}">L${l}</text>`);
  }
  f.rows.forEach((t, k) =>
    parts.push(
      `<text x="${labelW}" y="${y(k) + 4}" font-size="${FONT}" text-anchor="end" fill="${fg}" data-row="${t}">${markupText(label(t))}</text>`,
    ),
  );
  f.edges.forEach((e) => {
    // Weak edges thin and faint, so that the few that carry the target stand out of a dense graph.
    const w = (0.6 + 4.4 * e.weight).toFixed(2);
    const op = (0.2 + 0.8 * e.weight).toFixed(2);
    parts.push(
      `<line class="pt-edge" data-edge="${e.layer}:${e.to}:${e.from}" x1="${x(e.layer)}" y1="${y(e.fromRow)}" x2="${x(e.layer + 1)}" y2="${y(e.toRow)}" stroke="${cssRgb(TERM_RGB[e.term])}" stroke-width="${w}" stroke-opacity="${op}" stroke-linecap="round"/>`,
    );
  });
  let lx = 4;
  for (const t of o.terms ?? (['c2c', 'c2p', 'p2c'] as const)) {
    parts.push(`<rect x="${lx}" y="${legendY - 8}" width="14" height="4" fill="${cssRgb(TERM_RGB[t])}"/>`);
    parts.push(`<text x="${lx + 18}" y="${legendY}" font-size="${FONT}" fill="${fg}">${t}</text>`);
    lx += 60;
  }
  parts.push(
    `<text x="${lx}" y="${legendY}" font-size="${FONT}" fill="${fg}">width: |change| of the target, largest ${markupText(f.maxChange.toPrecision(3))}</text>`,
  );
  if (o.note) parts.push(`<text x="4" y="${legendY + 16}" font-size="${FONT}" fill="${fg}">${markupText(o.note)}</text>`);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${o.width}" height="${height}" viewBox="0 0 ${o.width} ${height}" font-family="sans-serif">${parts.join('')}</svg>`;
  return { svg, width: o.width, height };
}
