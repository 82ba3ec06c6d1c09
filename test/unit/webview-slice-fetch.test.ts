// The heatmap's matrices: half-precision slices through the same parse → answer → structured-clone path the
// panel uses (fixture ExplainResult of HF-computed v3_tiny outputs), the first slice sent with a result, and
// the order the view fetches ahead in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstSlice } from '../../src/extension/lens/first-slice';
import { answerRequest } from '../../src/extension/lens/request-dispatch';
import { parseRequestBody, type SliceResponse } from '../../src/shared/protocol/lens';
import { paintRequest, pictureRequests, prefetchPlan, sliceValues } from '../../webview/lens/state/slice-fetch';
import { describeRange } from '../../webview/common/colors';
import { robustRange, withExactExtent } from '../../src/shared/value-range';
import { formatValue } from '../../src/shared/format';
import { fixtureResult } from './analysis-fixture';

const result = fixtureResult('text0');
const n = result.n;

async function ask(body: unknown): Promise<SliceResponse> {
  const parsed = parseRequestBody(JSON.parse(JSON.stringify(body)));
  assert.ok(parsed, `request ${JSON.stringify(body)} parses`);
  return structuredClone(await answerRequest(result, parsed)) as SliceResponse;
}

test('a half-precision slice is half the bytes and within 2^-11 relative of the float32 one; plain slices stay exact', async () => {
  for (const kind of ['c2p', 'probs'] as const) {
    const exact = await ask({ type: 'slice', layer: 1, head: 2, kind });
    const half = await ask(paintRequest(1, 2, kind));
    assert.equal(exact.encoding, undefined);
    assert.equal(half.encoding, 'half');
    assert.equal(half.data.byteLength * 2, exact.data.byteLength);
    const want = result.slice(1, 2, kind);
    assert.deepEqual([...sliceValues(exact)], [...want]);
    const got = sliceValues(half);
    for (let k = 0; k < n * n; k++) {
      const tol = Math.max(Math.abs(want[k] ?? NaN) * 2 ** -11, 2 ** -24);
      assert.ok(Math.abs((got[k] ?? NaN) - (want[k] ?? NaN)) <= tol, `${kind}[${k}]: ${got[k]} vs ${want[k]}`);
    }
  }
  assert.equal(parseRequestBody({ type: 'slice', layer: 0, head: 0, kind: 'c2c', precision: 'bogus' })?.type, 'slice');
  assert.equal(
    (parseRequestBody({ type: 'slice', layer: 0, head: 0, kind: 'c2c', precision: 'bogus' }) as { precision?: string }).precision,
    undefined,
  );
});

test('the first slice is where the view was, falls back to the defaults, and is skipped for other views', async () => {
  const defaults = { term: 'c2p' as const, view: 'heatmap' as const, colorScale: 'diverging' as const };
  const at = await firstSlice(result, { layer: 1, head: 3, kind: 'probs' }, defaults);
  assert.deepEqual([at?.layer, at?.head, at?.kind, at?.encoding], [1, 3, 'probs', 'half']);
  const fallback = await firstSlice(result, { layer: 99, head: 0, kind: 'probs' }, defaults);
  assert.deepEqual([fallback?.layer, fallback?.head, fallback?.kind], [result.layers[0], 0, 'c2p']);
  assert.equal(await firstSlice(result, undefined, { ...defaults, view: 'heads' }), undefined);
  // The view's cache key for the same matrix is the paint request's: the seeded slice is a cache hit.
  assert.deepEqual(
    JSON.stringify(paintRequest(at!.layer, at!.head, at!.kind)),
    JSON.stringify({ type: 'slice', layer: 1, head: 3, kind: 'probs', precision: 'half' }),
  );
});

test('fetching ahead: one more step the way the reader moved comes first, then the neighbours, no duplicates', () => {
  const kinds = ['c2c', 'c2p', 'p2c', 'scores', 'probs'] as const;
  const layers = [0, 1, 2, 3];
  const key = (r: { layer: number; head: number; kind: string }) => `${r.layer}/${r.head}/${r.kind}`;
  const plan = (at: { layer: number; head: number; term: (typeof kinds)[number] }, prev?: typeof at) =>
    prefetchPlan(at, prev, kinds, layers, 8).map(key);
  assert.deepEqual(plan({ layer: 1, head: 3, term: 'c2p' }), ['1/4/c2p', '1/3/p2c', '1/2/c2p', '2/3/c2p']);
  assert.deepEqual(plan({ layer: 1, head: 3, term: 'c2p' }, { layer: 1, head: 4, term: 'c2p' })[0], '1/2/c2p', 'stepping down the heads');
  assert.deepEqual(plan({ layer: 1, head: 0, term: 'c2p' }, { layer: 1, head: 7, term: 'c2p' })[0], '1/1/c2p', 'wrapping forward');
  assert.deepEqual(
    plan({ layer: 2, head: 0, term: 'probs' }, { layer: 3, head: 0, term: 'probs' })[0],
    '1/0/probs',
    'stepping down the layers',
  );
  assert.deepEqual(plan({ layer: 0, head: 0, term: 'p2c' }, { layer: 0, head: 0, term: 'c2p' })[0], '0/0/scores', 'stepping through terms');
  const p = plan({ layer: 0, head: 0, term: 'c2c' }, { layer: 0, head: 7, term: 'c2c' });
  assert.equal(new Set(p).size, p.length, 'no duplicates');
  assert.ok(!p.includes('0/0/c2c'), 'not the matrix on screen');
  for (const r of prefetchPlan({ layer: 0, head: 0, term: 'c2c' }, undefined, kinds, layers, 8))
    assert.equal(r.type === 'slice' && r.precision, 'half');
  // A long input's map is fetched ahead as pictures of the same side and scaling.
  const pictures = prefetchPlan({ layer: 0, head: 0, term: 'probs' }, undefined, kinds, layers, 8, pictureRequests('row-log', 700));
  assert.deepEqual(pictures[0], { type: 'picture', layer: 0, head: 1, kind: 'probs', scaling: 'row-log', side: 700 });
  for (const r of pictures) assert.ok(r.type === 'picture' && r.side === 700 && r.scaling === 'row-log');
});

test('the legend states the float32 extremes: a half slice carries them, and they replace those of the half values', async () => {
  for (const [kind, signed] of [
    ['probs', false],
    ['c2p', true],
  ] as const) {
    const want = result.slice(0, 1, kind);
    const r = await ask(paintRequest(0, 1, kind));
    const lo = want.reduce((a, v) => Math.min(a, v), Infinity);
    const hi = want.reduce((a, v) => Math.max(a, v), -Infinity);
    assert.deepEqual(r.extent, [lo, hi]);
    for (const scaling of ['linear', 'log'] as const) {
      const range = withExactExtent(robustRange(sliceValues(r), signed, scaling), r.extent);
      const m = signed ? Math.max(-lo, hi) : hi;
      assert.equal(range.exact?.max, m, `${kind} ${scaling}: exact maximum`);
      if (!range.percentile && !range.log) assert.equal(range.max, m, 'limits that are the extremes are the float32 ones');
      if (range.percentile) assert.match(describeRange(range, kind), new RegExp(formatValue(m).replace('.', '\\.')));
    }
    assert.equal(
      withExactExtent(robustRange(sliceValues(r), signed, 'row'), r.extent).exact,
      undefined,
      'per-row scaling states no data range',
    );
  }
});
