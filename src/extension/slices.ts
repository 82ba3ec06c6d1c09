// Answers the webview's matrix requests from the ExplainResult the host keeps. Pure (no `vscode`), so the
// unit tests run it against real results.
import type { ExplainResult } from '../engine/result';
import type { MatrixKind } from '../engine/types';
import { kindsOf } from '../shared/kinds';
import { ablateLayer, aggregate, bucketLens, diffResults, discountSpecialColumns, distanceProfile, groupWords, poolGroups, rolloutResult, termShareGrid, DEFAULT_THRESHOLDS } from '../analysis';
import type { AblationResult, PositionSpec } from '../analysis';
import {
  toBuffer,
  type AblationPresetName,
  type AblationResponse,
  type AggregateRequest,
  type AggregateResponse,
  type BucketsResponse,
  type DiffRequest,
  type DiffResponse,
  type WordsRequest,
  type WordsResponse,
  type DistanceResponse,
  type ProfileSeries,
  type RolloutResponse,
  type SharesResponse,
  type HeadsResponse,
  type OverviewResponse,
  type ProtocolToken,
  type RequestBody,
  type ResponseBody,
  type RowResponse,
  type SliceResponse,
} from '../shared/protocol';

/** What the host knows beside the result: the model's relative-position geometry (for the bucket lens). */
export interface AnswerContext {
  positions?: PositionSpec;
  /** The result the panel showed before this one (the Diff view compares against it). */
  previous?: ExplainResult;
}

/** Throws a one-line Error for a request the result cannot answer (the webview shows it). */
export function answerRequest(result: ExplainResult, body: RequestBody, ctx: AnswerContext = {}): ResponseBody {
  switch (body.type) {
    case 'words':
      return words(result, body);
    case 'diff':
      return diff(result, ctx.previous, body);
    case 'aggregate':
      return aggregated(result, body);
    case 'shares':
      return shares(result, body.weighting);
    case 'ablation':
      return ablation(result, body.layer, body.head, body.preset);
    case 'distance':
      return distance(result, body.layer, body.head, body.query);
    case 'buckets':
      return buckets(result, ctx.positions);
    case 'rollout':
      return rollout(result, body.preset);
    case 'slice':
      return slice(result, body.layer, body.head, body.kind);
    case 'heads':
      return heads(result, body.layer, body.kind, body.maxSize);
    case 'overview':
      return overview(result, body.kind);
    case 'row':
      return row(result, body.layer, body.head, body.i);
  }
}

/** Matrix kinds the result can hand out, in display order. */
export function availableKinds(result: ExplainResult): MatrixKind[] {
  return kindsOf((k) => result.has(k));
}

export function protocolTokens(result: ExplainResult): ProtocolToken[] {
  return result.tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
}

function check(result: ExplainResult, layer: number, head: number | undefined, kind: MatrixKind): void {
  if (!result.layers.includes(layer)) throw new Error(`layer ${layer} is not in this result`);
  if (head !== undefined && (head < 0 || head >= result.heads)) throw new Error(`head ${head} is out of range`);
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
}

function slice(result: ExplainResult, layer: number, head: number, kind: MatrixKind): SliceResponse {
  check(result, layer, head, kind);
  return { type: 'slice', layer, head, kind, n: result.n, data: toBuffer(result.slice(layer, head, kind)) };
}

function heads(result: ExplainResult, layer: number, kind: MatrixKind, maxSize: number): HeadsResponse {
  check(result, layer, undefined, kind);
  const n = result.n;
  const size = Math.min(n, Math.max(1, Math.floor(maxSize)));
  const out = new Float32Array(result.heads * size * size);
  for (let h = 0; h < result.heads; h++) {
    downsampleInto(result.slice(layer, h, kind), n, size, out.subarray(h * size * size, (h + 1) * size * size));
  }
  return { type: 'heads', layer, kind, heads: result.heads, size, data: out.buffer };
}

/** Block-mean of an [n, n] matrix into [m, m] (m ≤ n); block edges follow floor(k·n/m). */
export function downsampleInto(src: Float32Array, n: number, m: number, dst: Float32Array): void {
  if (m === n) {
    dst.set(src);
    return;
  }
  const edge = (k: number) => Math.floor((k * n) / m);
  for (let bi = 0; bi < m; bi++) {
    const i0 = edge(bi);
    const i1 = edge(bi + 1);
    for (let bj = 0; bj < m; bj++) {
      const j0 = edge(bj);
      const j1 = edge(bj + 1);
      let s = 0;
      for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) s += src[i * n + j];
      dst[bi * m + bj] = s / ((i1 - i0) * (j1 - j0));
    }
  }
}

function overview(result: ExplainResult, kind: MatrixKind): OverviewResponse {
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
  const layers = result.layers;
  const H = result.heads;
  const n = result.n;
  const out = new Float32Array(layers.length * H);
  const metric = kind === 'probs' ? 'entropy' : 'mean-abs';
  layers.forEach((layer, li) => {
    for (let h = 0; h < H; h++) {
      const s = result.slice(layer, h, kind);
      out[li * H + h] = metric === 'entropy' ? meanRowEntropy(s, n) : meanAbs(s);
    }
  });
  return { type: 'overview', kind, metric, layers, heads: H, data: out.buffer };
}

export function meanRowEntropy(p: Float32Array, n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) {
    let e = 0;
    for (let j = 0; j < n; j++) {
      const v = p[i * n + j];
      if (v > 0) e -= v * Math.log(v);
    }
    total += e;
  }
  return n ? total / n : 0;
}

function meanAbs(s: Float32Array): number {
  let t = 0;
  for (let k = 0; k < s.length; k++) t += Math.abs(s[k]);
  return s.length ? t / s.length : 0;
}

function row(result: ExplainResult, layer: number, head: number, i: number): RowResponse {
  check(result, layer, head, 'probs');
  const n = result.n;
  if (i < 0 || i >= n) throw new Error(`token ${i} is out of range`);
  const rows: RowResponse['rows'] = {};
  for (const kind of availableKinds(result)) {
    rows[kind] = toBuffer(result.slice(layer, head, kind).subarray(i * n, (i + 1) * n));
  }
  return { type: 'row', layer, head, i, n, rows };
}

// ---- analysis requests (the analysis tabs) ----
// Heavy work (a layer's ablation, rollout, the share grid) is done once per result and kept in a small
// per-result LRU, so moving between heads of a 512-token result only copies out slices. The memo holds the
// analysis arrays, never the response buffers: a posted ArrayBuffer may be transferred (detached).

const MEMO_LIMIT = 12;
const memos = new WeakMap<ExplainResult, Map<string, unknown>>();

/** Computes `make()` once per (result, key); least recently used entries drop out beyond MEMO_LIMIT. */
export function memo<T>(result: ExplainResult, key: string, make: () => T): T {
  let m = memos.get(result);
  if (!m) memos.set(result, (m = new Map()));
  if (m.has(key)) {
    const v = m.get(key) as T;
    m.delete(key);
    m.set(key, v);
    return v;
  }
  const v = make();
  m.set(key, v);
  while (m.size > MEMO_LIMIT) m.delete(m.keys().next().value as string);
  return v;
}

function aggregated(result: ExplainResult, body: AggregateRequest): AggregateResponse {
  const { layer, head, kind, discountSpecial } = body;
  if (layer !== 'all') check(result, layer, typeof head === 'number' ? head : undefined, kind);
  else if (typeof head === 'number') check(result, result.layers[0], head, kind);
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
  if (discountSpecial && kind !== 'probs') throw new Error('discounting special tokens applies to probs only; pick the probs term');
  const n = result.n;
  const key = `agg/${layer}/${head}/${kind}`;
  const base = memo(result, key, () =>
    aggregate(result, kind, head === 'max' ? 'max' : 'mean', {
      layers: layer === 'all' ? undefined : [layer],
      heads: typeof head === 'number' ? [head] : undefined,
    }),
  );
  const values = discountSpecial ? discountSpecialColumns(base, n, result.tokens.map((t) => t.special)) : base;
  return { type: 'aggregate', layer, head, kind, discountSpecial, n, data: toBuffer(values) };
}

function shares(result: ExplainResult, weighting: 'uniform' | 'probs'): SharesResponse {
  const g = memo(result, `shares/${weighting}`, () => termShareGrid(result, { weighting }));
  const out: SharesResponse = {
    type: 'shares',
    weighting,
    layers: g.layers,
    heads: g.heads,
    content: toBuffer(g.content),
    labels: [...g.labels],
    thresholds: { ...DEFAULT_THRESHOLDS },
  };
  if (g.c2p) out.c2p = toBuffer(g.c2p);
  if (g.p2c) out.p2c = toBuffer(g.p2c);
  return out;
}

function ablation(result: ExplainResult, layer: number, head: number, preset: AblationPresetName): AblationResponse {
  check(result, layer, head, 'probs');
  const a = memo<AblationResult>(result, `ablate/${layer}/${preset}`, () => ablateLayer(result, layer, preset));
  const n = result.n;
  const nn = n * n;
  const part = (t: Float32Array, size: number) => toBuffer(t.subarray(head * size, (head + 1) * size));
  return {
    type: 'ablation',
    layer,
    head,
    preset,
    kept: a.kept,
    n,
    real: toBuffer(result.slice(layer, head, 'probs')),
    probs: part(a.probs, nn),
    diff: part(a.diff, nn),
    kl: part(a.kl, n),
    tv: part(a.tv, n),
  };
}

function distance(result: ExplainResult, layer: number, head: number, query: number | null): DistanceResponse {
  check(result, layer, head, 'probs');
  const n = result.n;
  if (query !== null && (query < 0 || query >= n)) throw new Error(`token ${query} is out of range`);
  const series: DistanceResponse['series'] = {};
  for (const kind of ['c2p', 'p2c', 'probs'] as const) {
    if (!result.has(kind)) continue;
    const p = distanceProfile(result.slice(layer, head, kind), n, query === null ? {} : { query });
    const s: ProfileSeries = { mean: toBuffer(Float32Array.from(p.mean)), std: toBuffer(Float32Array.from(p.std)), peakDelta: p.peakDelta };
    series[kind] = s;
  }
  return { type: 'distance', layer, head, query, n, series };
}

function buckets(result: ExplainResult, positions: PositionSpec | undefined): BucketsResponse {
  if (!positions) throw new Error('the bucket lens needs the model’s position settings; run Explain again');
  const b = memo(result, `buckets/${positions.positionBuckets}/${positions.maxRelativePositions}`, () => bucketLens(result.n, positions));
  return {
    type: 'buckets',
    n: b.n,
    mid: b.mid,
    zones: [...b.zones],
    zoneOf: toBuffer(Float32Array.from(b.zoneOf)),
    rowOf: toBuffer(Float32Array.from(b.rowOf)),
    groups: b.groups.map((g) => ({ row: g.row, zone: g.zone, deltas: g.deltas, pairs: g.pairs })),
  };
}

function rollout(result: ExplainResult, preset: AblationPresetName): RolloutResponse {
  const data = memo(result, `rollout/${preset}`, () => rolloutResult(result, preset === 'all' ? {} : { ablation: preset }));
  return { type: 'rollout', preset, layers: result.layers, n: result.n, data: toBuffer(data) };
}

/** The position settings of a model summary, as the analysis functions take them. */
export function positionSpecOf(summary: { position_buckets: number; max_relative_positions: number }): PositionSpec {
  const positionBuckets = summary.position_buckets > 0 ? summary.position_buckets : 0;
  return {
    positionBuckets,
    maxRelativePositions: summary.max_relative_positions,
    attSpan: positionBuckets > 0 ? positionBuckets : summary.max_relative_positions,
  };
}

// ---- word merging and the previous-result diff ----

/**
 * Pools one head (or the head mean/max) onto word groups. Rows: mean over a word's pieces. Columns: sum for
 * probs (a word receives what any of its pieces receives, rows still sum to 1), mean for raw terms and scores
 * (a long word should not look stronger for having more pieces).
 */
export function words(result: ExplainResult, body: WordsRequest): WordsResponse {
  const { layer, head, kind, mode } = body;
  check(result, layer, typeof head === 'number' ? head : undefined, kind);
  const n = result.n;
  const matrix =
    typeof head === 'number'
      ? result.slice(layer, head, kind)
      : memo(result, `agg/${layer}/${head}/${kind}`, () => aggregate(result, kind, head, { layers: [layer] }));
  const groups = memo(result, `words/${mode}`, () => groupWords(result.tokens, result.text, mode));
  const columns = kind === 'probs' ? 'sum' : 'mean';
  const data = poolGroups(matrix, n, groups, { columns });
  return {
    type: 'words',
    layer,
    head,
    kind,
    mode,
    columns,
    groups: groups.map((g) => ({ pieces: [...g.pieces], start: g.start, end: g.end, text: g.text, special: g.special })),
    n: groups.length,
    data: data.buffer as ArrayBuffer,
  };
}

/** current − previous for one head, over tokens matched by an LCS on piece text. */
export function diff(result: ExplainResult, previous: ExplainResult | undefined, body: DiffRequest): DiffResponse {
  const { layer, head, kind } = body;
  check(result, layer, head, kind);
  if (!previous) {
    return { type: 'diff', layer, head, kind, hasPrevious: false, nA: 0, nB: result.n, pairs: [], labels: [], data: new ArrayBuffer(0) };
  }
  if (!previous.layers.includes(layer)) throw new Error(`the previous explain has no layer ${layer}; pick one of ${previous.layers.join(', ')}`);
  const d = memo(result, `diff/${layer}/${kind}`, () => diffResults(previous, result, layer, kind));
  const P = d.pairs.length;
  return {
    type: 'diff',
    layer,
    head,
    kind,
    hasPrevious: true,
    nA: previous.n,
    nB: result.n,
    pairs: d.pairs.map(([a, b]) => [a, b] as [number, number]),
    labels: d.pairs.map(([, b]) => result.tokens[b].text),
    data: toBuffer(d.diff.subarray(head * P * P, (head + 1) * P * P)),
  };
}
