import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketLens } from '../../src/analysis/bucket-lens';
import { at } from './helpers';
import { fixtureResult, loadCase, V3_SPEC } from './analysis-fixture';

test('buckets Bk = 4, M = 8, n = 6: |δ| ≤ 2 exact, 3..5 share one log bucket', () => {
  // mid = 2; β(δ) = 2 + ⌈ln(δ/2)/ln(3.5)⌉ for δ = 3, 4, 5: ⌈0.32⌉ = ⌈0.55⌉ = ⌈0.73⌉ = 1 → β = 3, row 7.
  const lens = bucketLens(6, { positionBuckets: 4, maxRelativePositions: 8, attSpan: 4 });
  assert.equal(lens.mid, 2);
  const g = lens.groups.map((x) => [x.row, x.zone, x.deltas, x.pairs]);
  assert.deepEqual(g, [
    [1, 'log', [-5, -4, -3], 6],
    [2, 'exact', [-2], 4],
    [3, 'exact', [-1], 5],
    [4, 'exact', [0], 6],
    [5, 'exact', [1], 5],
    [6, 'exact', [2], 4],
    [7, 'log', [3, 4, 5], 6],
  ]);
  // pair (5, 0): δ = 5 → row 7, log; pair (1, 3): δ = −2 → row 2, exact
  assert.equal(lens.rowOf[5 * 6 + 0], 7);
  assert.equal(lens.zones[at(lens.zoneOf, 5 * 6 + 0)], 'log');
  assert.equal(lens.rowOf[1 * 6 + 3], 2);
  assert.equal(lens.zones[at(lens.zoneOf, 1 * 6 + 3)], 'exact');
});

test('no buckets, S = 2, n = 4: the span edge clamps', () => {
  // ι = clamp(δ + 2, 0, 3): δ = −3 clamped onto row 0 with δ = −2; δ = 2, 3 clamped onto row 3 with δ = 1
  const lens = bucketLens(4, { positionBuckets: 0, maxRelativePositions: 2, attSpan: 2 });
  assert.deepEqual(
    lens.groups.map((x) => [x.row, x.zone, x.deltas]),
    [
      [0, 'clamped', [-3, -2]],
      [1, 'exact', [-1]],
      [2, 'exact', [0]],
      [3, 'clamped', [1, 2, 3]],
    ],
  );
  assert.equal(lens.zones[at(lens.zoneOf, 0 * 4 + 3)], 'clamped'); // δ = −3
  assert.equal(lens.zones[at(lens.zoneOf, 0 * 4 + 2)], 'exact'); // δ = −2 itself is in range
});

test('fixture: the lens rows equal HF position_index for v3_tiny (long40 runs past the span)', () => {
  for (const name of ['text0', 'long40']) {
    const c = loadCase(name);
    const n = c.input_ids.length;
    const lens = bucketLens(n, V3_SPEC);
    assert.deepEqual(Array.from(lens.rowOf), c.expected.position_index.flat());
    assert.equal(
      lens.groups.reduce((a, g) => a + g.pairs, 0),
      n * n,
    );
  }
  assert.equal(fixtureResult('text0').n, 35);
});
