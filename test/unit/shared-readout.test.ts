import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distanceText } from '../../src/shared/hover';

test('the readout names δ, the table row and the keys that share a log bucket', () => {
  // Query row 3 of a 4-token map: keys 0 and 1 read table row 9 (one log bucket), key 2 row 10 (exact).
  const n = 4;
  const rowOf = new Float32Array(16);
  const zoneOf = new Float32Array(16);
  rowOf.set([9, 9, 10, 11], 12);
  zoneOf.set([1, 1, 0, 0], 12);
  const b = { n, rowOf, zoneOf, zones: ['exact', 'log', 'clamped'] };
  assert.equal(
    distanceText(3, 0, b),
    'δ = i − j = 3: relative-position row 9 (log bucket); shares it with 1 other key (#0–#1): their c2p/p2c position part is identical',
  );
  assert.equal(distanceText(3, 2, b), 'δ = i − j = 1: relative-position row 10 (exact distance)');
  assert.equal(distanceText(3, 2, undefined), 'δ = i − j = 1');
});
