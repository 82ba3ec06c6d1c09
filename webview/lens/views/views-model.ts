// Pure helpers of the analysis views (term shares, ablation, distance profile, bucket lens, rollout, export):
// colours, captions and sentences, chart scales and the SVG writer. No DOM: the unit tests run it under node.
import { colorOf, type Range, type Rgb } from '../../common/colors';
import { formatValue } from '../../../src/shared/format';
import type { AblationPresetName, AnalysisView, BucketGroupInfo, ShareLabel } from '../../../src/shared/protocol/lens';

/** One-line caption per view: what it shows, for someone who knows attention but not this tool. */
export const VIEW_CAPTIONS: Record<AnalysisView, string> = {
  shares:
    'Each cell is one head (rows: layers, columns: heads). Colour: how much of its attention scores comes from content (c2c, green) versus relative position (c2p + p2c, purple), by mean |term| share.',
  ablation:
    'What this head would attend to if some score terms were dropped (same scale, same softmax): real probabilities, ablated probabilities, and ablated − real. Rows are queries, columns keys.',
  distance:
    'The c2p and p2c terms of this head averaged over every (query, key) pair at the same relative distance δ = query − key (δ > 0: key to the left), mean ± std. Hover a token for its own row.',
  buckets:
    'Which (query, key) pairs see their exact relative distance and which share a log bucket (several distances read the same position embedding) or are clamped at the span’s edge.',
  rollout:
    'Attention rollout: how much of each key token’s input reaches each query token’s output through all layers (heads averaged, residual added), for the real model or an ablation.',
  interventions:
    'Remove attention terms inside the real forward pass (zero them before the softmax, or replace them by their mean) and rerun every later layer: the predictions at each [MASK] before and after. Unlike “Softmax ablation”, which re-softmaxes one layer’s stored terms, this is a recomputation.',
  ranking:
    'Which heads matter at one position: each head’s term removed alone (rerun from its layer), heads ranked by the drop in the log-probability of the token the model predicts there. Click a cell to open that head.',
  diff:
    'This explain minus the previous one (e.g. before and after an edit) for the current layer, head and term, over the tokens both texts share (matched in order by piece text). Red: larger now, blue: smaller.',
};

/**
 * BERT's captions where DeBERTa's words would be wrong: BERT has absolute positions, one q·k score per layer, and
 * only layer 0's score splits exactly by embedding part (content, position, and the rest: token type, LayerNorm
 * shift, biases).
 */
export const BERT_VIEW_CAPTIONS: Partial<Record<AnalysisView, string>> = {
  shares:
    'BERT, layer 0, per head: the mean share of |c2c|, |c2p|, |p2c|, |p2p| and |rest| in the score (per (query, key) cell |term| / sum of the five |terms|, then the mean over cells — the rule DeBERTa’s grid uses over its three terms). Position here is absolute: p2p and rest (token type, LayerNorm shift, biases) are BERT’s extra columns.',
  distance:
    'BERT, layer 0: the score’s c2p, p2c and p2p (c2c for reference) averaged over every (query, key) pair at the same distance δ = query − key (δ > 0: key to the left): the mean per δ (± std in the readout). They come from absolute position embeddings, entangled with content by one LayerNorm, so this shows how much of them depends on δ alone; the split is exact in layer 0 only. Hover a token for its own row.',
  rollout: 'Attention rollout: how much of each key token’s input reaches each query token’s output through all layers (heads averaged, residual added), of the real attention.',
  interventions:
    'Remove whole heads inside the real forward pass (BERT’s score is one q·k product: zero a head’s score, or replace it by its mean over keys) and rerun every later layer: the predictions at each [MASK] before and after.',
  ranking:
    'Which heads matter at one position: each head’s score removed alone (rerun from its layer), heads ranked by the drop in the log-probability of the token the model predicts there. Click a cell to open that head.',
};

/** One line instead of a view that works on DeBERTa's separable relative-position terms. */
export const BERT_NOT_APPLICABLE: Partial<Record<AnalysisView, string>> = {
  ablation:
    'Softmax ablation drops DeBERTa’s separable terms (c2c, c2p, p2c) from every layer’s score; BERT’s score is one q·k product with no such terms, so there is nothing to drop here (Intervention removes whole heads).',
  buckets: 'The bucket lens shows which distances share a relative-position embedding; BERT has absolute position embeddings, one per position, so there are no relative buckets.',
};

/** The caption of `view` for the model on screen. */
export function viewCaption(view: AnalysisView, bert: boolean): string {
  return (bert && (BERT_NOT_APPLICABLE[view] === undefined ? BERT_VIEW_CAPTIONS[view] : undefined)) || VIEW_CAPTIONS[view];
}

/** What BERT's views say about a layer after 0. */
export function bertNoSplitText(layer: number, view: 'distance' | 'shares'): string {
  const what = view === 'distance' ? 'no c2p, p2c or p2p to profile by δ' : 'no term shares';
  return `BERT has no separable terms in layer ${layer}: its score is one q·k product of hidden states in which content and position are already mixed, so there are ${what}. Only layer 0’s score splits exactly.`;
}

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

export const VIEW_TITLES: Record<AnalysisView, string> = {
  shares: 'Term shares',
  ablation: 'Softmax ablation',
  distance: 'Distance',
  buckets: 'Buckets',
  rollout: 'Rollout',
  diff: 'Diff',
  interventions: 'Intervention (rerun)',
  ranking: 'Head ranking',
};

/** Shown in the Diff tab before there are two results to compare. */
export const DIFF_EMPTY = 'Explain twice (e.g. before and after an edit) to compare: the Diff tab then shows current − previous.';

/** "current − previous explain, 12 of 14 tokens matched (previous had 13)". */
export function diffCaption(kind: string, layer: number, head: number, matched: number, nB: number, nA: number, what = 'current − previous explain'): string {
  return `${kind}, layer ${layer}, head ${head}: ${what}, ${matched} of ${nB} tokens matched (previous had ${nA}).`;
}

/**
 * Below this share of the shorter text's tokens matched, the two explains are not the same passage (an edit
 * keeps most tokens; unrelated paragraphs still share "the", "of" and punctuation, typically 10–25%).
 */
export const SAME_PASSAGE_SHARE = 0.5;

/** A warning when the diff compares different passages, or undefined when it compares two versions of one. */
export function diffMismatch(matched: number, nB: number, nA: number): string | undefined {
  const shorter = Math.min(nA, nB);
  if (shorter === 0 || matched / shorter >= SAME_PASSAGE_SHARE) return undefined;
  return `These are not the same passage: only ${matched} of ${shorter} tokens (${Math.round((100 * matched) / shorter)}%) matched, so the differences mostly compare unrelated words. Explain an edited version of the same text to compare.`;
}

/** Caption of the word-merged heatmap: which pooling made the numbers. */
export function mergeCaption(kind: string, mode: 'words' | 'identifiers', columns: 'sum' | 'mean', words: number, pieces: number): string {
  const unit = mode === 'identifiers' ? 'identifiers' : 'words';
  return `${pieces} pieces merged into ${words} ${unit}: each row is the mean over the query word’s pieces, each column the ${columns} over the key word’s pieces (${kind}${columns === 'sum' ? ': rows still sum to 1' : ''}).`;
}

export const PRESET_LABELS: Record<AblationPresetName, string> = {
  all: 'all terms (real)',
  'content-only': 'content only (c2c)',
  'position-only': 'position only (c2p + p2c)',
  'no-c2c': 'without c2c',
  'no-c2p': 'without c2p',
  'no-p2c': 'without p2c',
};

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

/** A distance profile's series, in the order charts draw and sentences list them. */
export const PROFILE_ORDER = ['c2c', 'c2p', 'p2c', 'p2p'] as const;

/** Line colours of the distance chart: c2p and p2c as DeBERTa's chart has them; c2c grey (reference), p2p purple. */
export const SERIES_COLORS = { c2c: '#8c8c8c', c2p: '#d95f02', p2c: '#1b9e77', p2p: '#7570b3' } as const;

/** "peaks at δ = +1: looks one token to the left". δ = query − key, so δ > 0 means the key is to the left. */
export function peakSentence(delta: number, what = 'peaks'): string {
  if (!Number.isFinite(delta)) return `${what}: no data`;
  const sign = delta > 0 ? '+' : delta < 0 ? '−' : '';
  const head = `${what} at δ = ${sign}${Math.abs(delta)}`;
  if (delta === 0) return `${head}: looks at the token itself`;
  const count = Math.abs(delta) === 1 ? 'one token' : `${Math.abs(delta)} tokens`;
  return `${head}: looks ${count} to the ${delta > 0 ? 'left' : 'right'}`;
}

/** Y range of a profile chart: min/max of mean ± std over the finite entries (never empty). */
export function profileRange(series: { mean: Float32Array; std: Float32Array }[]): { min: number; max: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    for (let k = 0; k < s.mean.length; k++) {
      const m = s.mean[k];
      if (!Number.isFinite(m)) continue;
      const d = Number.isFinite(s.std[k]) ? s.std[k] : 0;
      lo = Math.min(lo, m - d);
      hi = Math.max(hi, m + d);
    }
  }
  if (!(lo <= hi)) return { min: -1, max: 1 };
  if (lo === hi) return { min: lo - 1, max: hi + 1 };
  return { min: lo, max: hi };
}

/** Per-row ablation readout: how far the ablated row is from the real one. */
export function ablationRowText(i: number, token: string, kl: number, tv: number): string {
  return `query #${i} “${token}”: KL(real ‖ ablated) = ${formatValue(kl)} nats, total variation = ${formatValue(tv)}`;
}

/** Mean and max of a per-row statistic (the ablation summary line). */
export function meanMax(v: Float32Array): { mean: number; max: number; argmax: number } {
  let s = 0;
  let max = -Infinity;
  let argmax = -1;
  for (let k = 0; k < v.length; k++) {
    s += v[k];
    if (v[k] > max) {
      max = v[k];
      argmax = k;
    }
  }
  return { mean: v.length ? s / v.length : NaN, max, argmax };
}

export const ZONE_COLORS: Record<BucketGroupInfo['zone'], Rgb> = {
  exact: [166, 206, 227],
  log: [253, 191, 111],
  clamped: [227, 26, 28],
};

export const ZONE_TEXT: Record<BucketGroupInfo['zone'], string> = {
  exact: 'exact distance (one embedding row per δ)',
  log: 'log bucket (several δ share one row)',
  clamped: 'clamped at the span’s edge',
};

/** One line per zone: how many pairs fall in it and an example of pooled distances. */
export function bucketSummary(groups: readonly BucketGroupInfo[], mid: number): string[] {
  const zones: BucketGroupInfo['zone'][] = ['exact', 'log', 'clamped'];
  const out: string[] = [];
  for (const z of zones) {
    const gs = groups.filter((g) => g.zone === z);
    if (!gs.length) continue;
    const pairs = gs.reduce((a, g) => a + g.pairs, 0);
    const pooled = gs.filter((g) => g.deltas.length > 1);
    let line = `${ZONE_TEXT[z]}: ${pairs} pairs over ${gs.length} rows`;
    if (z === 'exact') line += ` (|δ| ≤ ${mid})`;
    if (pooled.length) {
      const g = pooled.reduce((a, b) => (b.deltas.length > a.deltas.length ? b : a));
      line += `; e.g. δ = ${g.deltas[0]}…${g.deltas[g.deltas.length - 1]} all read row ${g.row}`;
    }
    out.push(line);
  }
  return out;
}

/** Describes one pair of the bucket matrix. */
export function bucketPairText(i: number, j: number, zone: BucketGroupInfo['zone'], row: number, group: BucketGroupInfo | undefined): string {
  const d = i - j;
  const shared = group && group.deltas.length > 1 ? `, shared with δ ∈ {${group.deltas.join(', ')}}` : '';
  return `query #${i} → key #${j}: δ = ${d}, ${ZONE_TEXT[zone]}, table row ${row}${shared}`;
}

function hex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
}

function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

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
export function heatmapSvg(values: Float32Array, rows: number, cols: number, range: Range, lut: Uint8ClampedArray, opts: SvgOptions = {}): string {
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
  if (opts.title) out.push(`<title>${escapeXml(opts.title)}</title><text x="0" y="14" font-family="sans-serif" font-size="12">${escapeXml(opts.title)}</text>`);
  out.push(`<g transform="translate(${margin},${top})">`);
  for (let i = 0; i < rows; i++) {
    let j = 0;
    while (j < cols) {
      const c = hex(colorOf(values[i * cols + j], range, lut));
      let k = j + 1;
      while (k < cols && hex(colorOf(values[i * cols + k], range, lut)) === c) k++;
      out.push(`<rect x="${j * cell}" y="${i * cell}" width="${(k - j) * cell}" height="${cell}" fill="${c}"/>`);
      j = k;
    }
  }
  out.push('</g>');
  if (labels) {
    const fs = Math.min(12, cell - 1);
    opts.rowLabels?.forEach((t, i) =>
      out.push(`<text x="${margin - 4}" y="${top + (i + 0.75) * cell}" font-family="monospace" font-size="${fs}" text-anchor="end">${escapeXml(t)}</text>`),
    );
    opts.colLabels?.forEach((t, j) => {
      const x = margin + (j + 0.75) * cell;
      out.push(`<text x="${x}" y="${top - 4}" font-family="monospace" font-size="${fs}" transform="rotate(-60 ${x} ${top - 4})">${escapeXml(t)}</text>`);
    });
  }
  out.push('</svg>');
  return out.join('\n');
}
