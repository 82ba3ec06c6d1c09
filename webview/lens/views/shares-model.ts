// Pure helpers of the term-share views: DeBERTa's share grid (colour, tag, readout) and BERT's share table
// (columns, percentages, readout). No DOM.
import type { Rgb } from '../../common/colors';
import type { ShareLabel } from '../../../src/shared/protocol/lens';

/** The line under BERT's share table: which layers have no split. */
export function bertOtherLayersText(layers: readonly number[]): string {
  const later = layers.filter((l) => l > 0);
  if (later.length === 0) return '';
  const span = later.length === 1 ? `Layer ${later[0]}` : `Layers ${later[0]}–${later[later.length - 1]}`;
  return `${span}: no term shares — BERT’s score has no separable terms after layer 0.`;
}

/** The five columns of BERT's share table, with what each term is. */
export const BERT_SHARE_COLUMNS = [
  { term: 'c2c', title: 'content → content' },
  { term: 'c2p', title: 'content → position' },
  { term: 'p2c', title: 'position → content' },
  { term: 'p2p', title: 'position → position (BERT only)' },
  { term: 'rest', title: 'token type, LayerNorm shift and biases (BERT only)' },
] as const;
export type BertShareTerm = (typeof BERT_SHARE_COLUMNS)[number]['term'];

/** A share as the table prints it: "12.3%". */
export function sharePercent(x: number): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '–';
}

/** The readout of one row of BERT's share table. */
export function bertShareText(head: number, s: Record<BertShareTerm, number>): string {
  const position = s.c2p + s.p2c + s.p2p;
  return `Layer 0, head ${head}: ${BERT_SHARE_COLUMNS.map(({ term }) => `${term} ${sharePercent(s[term])}`).join(', ')}; position (c2p + p2c + p2p) ${sharePercent(position)}`;
}

// Content green, position purple: distinguishable with the common colour-vision deficiencies, and neither is
// the heatmaps' red or blue, so a share grid is not mistaken for a signed matrix.
const CONTENT: Rgb = [27, 158, 119];
const POSITION: Rgb = [117, 112, 179];
const MIXED: Rgb = [236, 236, 236];
// On a dark page the midpoint is a dark grey: a pale grid would glare there.
const MIXED_DARK: Rgb = [58, 58, 64];

/** Colour of a head by its content share (1 = all content, 0 = all position), through a midpoint near the page. */
export function shareColor(content: number, theme: 'light' | 'dark' = 'light'): Rgb {
  const t = Math.min(1, Math.max(0, Number.isFinite(content) ? content : 0.5));
  const mid = theme === 'dark' ? MIXED_DARK : MIXED;
  const [a, b, f] = t >= 0.5 ? [mid, CONTENT, (t - 0.5) * 2] : [mid, POSITION, (0.5 - t) * 2];
  return [Math.round(a[0] + (b[0] - a[0]) * f), Math.round(a[1] + (b[1] - a[1]) * f), Math.round(a[2] + (b[2] - a[2]) * f)];
}

/** Short tag drawn in a share cell. */
export function labelTag(label: ShareLabel): string {
  return label === 'content' ? 'C' : label === 'positional' ? 'P' : 'M';
}

export function shareText(layer: number, head: number, content: number, label: ShareLabel, c2p?: number, p2c?: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const parts = [`content (c2c) ${pct(content)}`];
  if (c2p !== undefined) parts.push(`c2p ${pct(c2p)}`);
  if (p2c !== undefined) parts.push(`p2c ${pct(p2c)}`);
  return `Layer ${layer}, head ${head}: ${label} — ${parts.join(', ')}; position share ${pct(1 - content)}`;
}
