import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distanceProfile, rowDeltaRanges, rowProfile, tableRowScores } from '../../src/analysis/distance-profile';
import { isLensError } from '../../src/engine/errors';
import { at } from './helpers';
import { fixtureResult, V3_SPEC } from './analysis-fixture';

// [[1,2,3],[4,5,6],[7,8,9]], δ = i − j:
//   δ=−2: 3 | δ=−1: 2,6 | δ=0: 1,5,9 | δ=1: 4,8 | δ=2: 7
const m = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]);

test('profile over δ: count, mean, population std, peak', () => {
  const p = distanceProfile(m, 3);
  assert.deepEqual(Array.from(p.deltas), [-2, -1, 0, 1, 2]);
  assert.deepEqual(Array.from(p.count), [1, 2, 3, 2, 1]);
  assert.deepEqual(Array.from(p.mean), [3, 4, 5, 6, 7]);
  const std = Array.from(p.std);
  assert.deepEqual([std[0], std[1], std[3], std[4]], [0, 2, 2, 0]);
  assert.ok(Math.abs(at(std, 2) - Math.sqrt(32 / 3)) < 1e-12);
  assert.equal(p.peakDelta, 2);
});

test('profile for one query token', () => {
  // row 1 = [4,5,6] at δ = 1, 0, −1
  const p = distanceProfile(m, 3, { query: 1 });
  assert.deepEqual(Array.from(p.count), [0, 1, 1, 1, 0]);
  assert.deepEqual(Array.from(p.mean).slice(1, 4), [6, 5, 4]);
  assert.ok(Number.isNaN(p.mean[0]));
  assert.equal(p.peakDelta, -1);
  assert.throws(() => distanceProfile(m, 3, { query: 3 }), isLensError);
});

test('ties go to the smaller |δ|', () => {
  assert.equal(distanceProfile(Float32Array.from([1, 1, 1, 1]), 2).peakDelta, 0);
  assert.equal(distanceProfile(Float32Array.from([0, 1, 1, 0]), 2).peakDelta, -1);
});

test('head selection in an [H,n,n] tensor', () => {
  const t = new Float32Array(18);
  t.set(m, 9);
  assert.deepEqual(Array.from(distanceProfile(t, 3, { head: 1 }).mean), [3, 4, 5, 6, 7]);
});

test('row profile pools distances sharing a table row (no buckets, S = 1: clamp)', () => {
  // ι = clamp(δ + 1, 0, 1): δ ∈ {−2, −1} → row 0 (3, 2, 6); δ ∈ {0, 1, 2} → row 1 (1,5,9,4,8,7)
  const p = rowProfile(m, 3, { positionBuckets: 0, maxRelativePositions: 1, attSpan: 1 });
  assert.deepEqual(Array.from(p.rows), [0, 1]);
  assert.deepEqual(p.deltas, [
    [-2, -1],
    [0, 1, 2],
  ]);
  assert.deepEqual(Array.from(p.count), [3, 6]);
  assert.ok(Math.abs(at(p.mean, 0) - 11 / 3) < 1e-12);
  assert.ok(Math.abs(at(p.mean, 1) - 34 / 6) < 1e-12);
  const var0 = (9 + 4 + 36) / 3 - (11 / 3) ** 2;
  assert.ok(Math.abs(at(p.std, 0) - Math.sqrt(var0)) < 1e-9);
  assert.equal(p.peakRow, 1);
});

test('table row scores: q · PK[r] for every row', () => {
  const pk = Float32Array.from([1, 0, 0, 1, 1, 1, -1, 2]); // [4, 2]
  assert.deepEqual(Array.from(tableRowScores(pk, 2, Float32Array.from([2, 3]))), [2, 3, 5, 4]);
  assert.throws(() => tableRowScores(pk, 3, Float32Array.from([1, 2, 3])), isLensError);
  assert.throws(() => tableRowScores(pk, 2, Float32Array.from([1])), isLensError);
});

test('δ range per table row', () => {
  // S = 2, no buckets: ι = clamp(δ + 2, 0, 3) over δ ∈ [−3, 3]
  const r = rowDeltaRanges({ positionBuckets: 0, maxRelativePositions: 2, attSpan: 2 }, 3);
  assert.deepEqual(r, [
    { min: -3, max: -2 },
    { min: -1, max: -1 },
    { min: 0, max: 0 },
    { min: 1, max: 3 },
  ]);
});

test('fixture: c2p row profile agrees with the δ profile inside the exact zone', () => {
  const r = fixtureResult('text0');
  const c2p = r.tensor(0, 'c2p');
  const byDelta = distanceProfile(c2p, r.n, { head: 1 });
  const byRow = rowProfile(c2p, r.n, V3_SPEC, { head: 1 });
  // |δ| ≤ 8 is exact for 16 buckets: row 16 + δ holds δ alone.
  for (let d = -8; d <= 8; d++) {
    const s = Array.from(byRow.rows).indexOf(16 + d);
    assert.deepEqual(byRow.deltas[s], [d]);
    assert.ok(Math.abs(at(byRow.mean, s) - at(byDelta.mean, d + r.n - 1)) < 1e-6);
  }
  // c2p depends on the query and the row only, so within one query row cells of the same row are equal.
  const q = distanceProfile(c2p, r.n, { head: 1, query: 20 });
  assert.equal(
    q.count.reduce((a, b) => a + b, 0),
    r.n,
  );
});

test('the peak ignores far distances backed by a handful of pairs', () => {
  // n = 8: δ = −7 has one cell with a huge value; δ = +1 is high on all its 7 cells.
  const n = 8;
  const m = new Float32Array(n * n);
  for (let i = 1; i < n; i++) m[i * n + (i - 1)] = 5;
  m[0 * n + 7] = 100;
  assert.equal(distanceProfile(m, n).peakDelta, 1);
});
