// Responses of the analysis views (aggregate, term shares, ablation, distance, buckets, rollout, words, diff).
// Whole-model analyses stream layer by layer through the analysis functions; results are memoised per result.
import type { ExplainResult } from '../../engine';
import {
  ablateLayer,
  aggregate,
  bertDistanceProfiles,
  bertShares,
  bucketLens,
  diffResults,
  discountSpecialColumns,
  distanceProfile,
  groupWords,
  labelHead,
  poolGroups,
  rolloutResult,
  termShareGrid,
  BERT_PROFILE_TERMS,
  BERT_SPLIT_LAYER,
  DEFAULT_THRESHOLDS,
} from '../../analysis';
import type { DistanceProfile, PositionSpec } from '../../analysis';
import {
  toBuffer,
  type AblationPresetName,
  type AblationResponse,
  type AggregateRequest,
  type AggregateResponse,
  type BucketsResponse,
  type DiffRequest,
  type DiffResponse,
  type DistanceResponse,
  type ProfileSeries,
  type RolloutResponse,
  type SharesResponse,
  type WordsRequest,
  type WordsResponse,
} from '../../shared/protocol/lens';
import { memo } from './result-memo';
import { check, offsetText } from '../common/result-shape';

export async function aggregated(result: ExplainResult, body: AggregateRequest): Promise<AggregateResponse> {
  const { layer, head, kind, discountSpecial } = body;
  if (layer !== 'all') check(result, layer, typeof head === 'number' ? head : undefined, kind);
  else if (typeof head === 'number') {
    // Every layer has the same heads and terms: the first one answers for all.
    const first = result.layers[0];
    if (first === undefined) throw new Error('this result has no layers');
    check(result, first, head, kind);
  }
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
  if (discountSpecial && kind !== 'probs') throw new Error('discounting special tokens applies to probs only; pick the probs term');
  const n = result.n;
  const base = await memo(result, `agg/${layer}/${head}/${kind}`, () =>
    aggregate(result, kind, head === 'max' ? 'max' : 'mean', {
      layers: layer === 'all' ? undefined : [layer],
      heads: typeof head === 'number' ? [head] : undefined,
    }),
  );
  const values = discountSpecial
    ? discountSpecialColumns(
        base,
        n,
        result.tokens.map((t) => t.special),
      )
    : base;
  return { type: 'aggregate', layer, head, kind, discountSpecial, n, data: toBuffer(values) };
}

function isBert(result: ExplainResult): boolean {
  return result.model.architecture === 'bert';
}

/** Said for a view that drops or buckets DeBERTa's relative terms, asked of a BERT result. */
function notForBert(what: string): Error {
  return new Error(`${what} works on DeBERTa's separable relative-position terms; BERT has absolute positions and one q·k score per layer`);
}

export async function shares(result: ExplainResult, weighting: 'uniform' | 'probs'): Promise<SharesResponse> {
  if (isBert(result)) return bertSharesResponse(result, weighting);
  const g = await memo(result, `shares/${weighting}`, () => termShareGrid(result, { weighting }));
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

/** BERT: per head of layer 0, the shares of its five-part split (the other layers have no separable terms). */
async function bertSharesResponse(result: ExplainResult, weighting: 'uniform' | 'probs'): Promise<SharesResponse> {
  const s = await memo(result, `bert-shares/${weighting}`, () => bertShares(result, weighting));
  return {
    type: 'shares',
    weighting,
    layers: [BERT_SPLIT_LAYER],
    heads: result.heads,
    content: toBuffer(s.c2c),
    c2p: toBuffer(s.c2p),
    p2c: toBuffer(s.p2c),
    p2p: toBuffer(s.p2p),
    rest: toBuffer(s.rest),
    split: 'bert-layer0',
    labels: Array.from(s.c2c, (c) => labelHead(c)),
    thresholds: { ...DEFAULT_THRESHOLDS },
  };
}

export async function ablation(result: ExplainResult, layer: number, head: number, preset: AblationPresetName): Promise<AblationResponse> {
  if (isBert(result)) throw notForBert('Softmax ablation');
  check(result, layer, head, 'probs');
  const a = await memo(result, `ablate/${layer}/${preset}`, () => ablateLayer(result, layer, preset));
  await result.load(layer);
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

export async function distance(result: ExplainResult, layer: number, head: number, query: number | null): Promise<DistanceResponse> {
  check(result, layer, head, 'probs');
  const n = result.n;
  if (query !== null && (query < 0 || query >= n)) throw new Error(`token ${query} is out of range`);
  await result.load(layer);
  const series: DistanceResponse['series'] = {};
  const put = (kind: keyof DistanceResponse['series'], p: DistanceProfile) => {
    const s: ProfileSeries = { mean: toBuffer(Float32Array.from(p.mean)), std: toBuffer(Float32Array.from(p.std)), peakDelta: p.peakDelta };
    series[kind] = s;
  };
  const bert = isBert(result);
  const split = bert && layer === BERT_SPLIT_LAYER && result.hasDecomposition;
  if (split) {
    const profiles = await bertDistanceProfiles(result, head, query ?? undefined);
    for (const t of BERT_PROFILE_TERMS) put(t, profiles[t]);
  }
  for (const kind of ['c2p', 'p2c', 'probs'] as const) {
    if (kind !== 'probs' && (bert || !result.has(kind))) continue;
    put(kind, distanceProfile(result.slice(layer, head, kind), n, query === null ? {} : { query }));
  }
  const out: DistanceResponse = { type: 'distance', layer, head, query, n, series };
  if (bert) out.split = split ? 'bert-layer0' : 'bert-none';
  return out;
}

export function buckets(result: ExplainResult, positions: PositionSpec | undefined): BucketsResponse {
  if (isBert(result)) throw notForBert('The bucket lens');
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

export async function rollout(result: ExplainResult, preset: AblationPresetName): Promise<RolloutResponse> {
  if (isBert(result) && preset !== 'all')
    throw notForBert(`Rollout without ${preset === 'content-only' ? 'the position terms' : 'some terms'}`);
  const data = await memo(result, `rollout/${preset}`, () => rolloutResult(result, preset === 'all' ? {} : { ablation: preset }));
  return { type: 'rollout', preset, layers: result.layers, n: result.n, data: toBuffer(data) };
}

/**
 * Pools one head (or the head mean/max) onto word groups. Rows: mean over a word's pieces. Columns: sum for
 * probs (a word receives what any of its pieces receives, rows still sum to 1), mean for raw terms and scores
 * (a long word should not look stronger for having more pieces).
 */
export async function words(result: ExplainResult, body: WordsRequest): Promise<WordsResponse> {
  const { layer, head, kind, mode } = body;
  check(result, layer, typeof head === 'number' ? head : undefined, kind);
  const n = result.n;
  let matrix: Float32Array;
  if (typeof head === 'number') {
    await result.load(layer);
    matrix = result.slice(layer, head, kind);
  } else matrix = await memo(result, `agg/${layer}/${head}/${kind}`, () => aggregate(result, kind, head, { layers: [layer] }));
  const groups = memo(result, `words/${mode}`, () => groupWords(result.tokens, offsetText(result), mode));
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
export async function diff(result: ExplainResult, previous: ExplainResult | undefined, body: DiffRequest): Promise<DiffResponse> {
  const { layer, head, kind } = body;
  check(result, layer, head, kind);
  if (!previous) {
    return { type: 'diff', layer, head, kind, hasPrevious: false, nA: 0, nB: result.n, pairs: [], labels: [], data: new ArrayBuffer(0) };
  }
  if (!previous.layers.includes(layer))
    throw new Error(`the previous explain has no layer ${layer}; pick one of ${previous.layers.join(', ')}`);
  const d = await memo(result, `diff/${layer}/${kind}`, () => diffResults(previous, result, layer, kind));
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
    labels: d.pairs.map(([, b]) => result.tokens[b]?.text ?? ''),
    data: toBuffer(d.diff.subarray(head * P * P, (head + 1) * P * P)),
    removed: d.onlyA.map((a) => ({ index: a, text: previous.tokens[a]?.text ?? '' })),
  };
}
