import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeHalf, encodeHalf, toHalfBits } from '../../src/shared/half';
import { at } from './helpers';

// Bit patterns from the IEEE 754 binary16 definition (sign 1, exponent 5 with bias 15, fraction 10).
test('toHalfBits gives the binary16 patterns of exact, rounded, subnormal and special values', () => {
  const cases: [number, number][] = [
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff], // largest finite half
    [65520, 0x7c00], // rounds up past it: +Infinity
    [2 ** -14, 0x0400], // smallest normal
    [2 ** -24, 0x0001], // smallest subnormal
    [2 ** -25, 0x0000], // a tie between 0 and the smallest subnormal: to even (0)
    [3 * 2 ** -25, 0x0002], // a tie between 1 and 2 subnormal steps: to even (2)
    [0.1, 0x2e66],
    [1 / 3, 0x3555],
    [1 + 2 ** -11, 0x3c00], // tie: to even
    [1 + 3 * 2 ** -11, 0x3c02], // tie: to even (up)
    [-0, 0x8000],
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
  ];
  for (const [v, bits] of cases) assert.equal(toHalfBits(v), bits, `${v} → 0x${bits.toString(16)}`);
  assert.equal(toHalfBits(NaN) & 0x7c00, 0x7c00);
  assert.notEqual(toHalfBits(NaN) & 0x3ff, 0, 'NaN keeps a non-zero fraction');
});

test('decodeHalf inverts encodeHalf within half a unit in the last place (2^-11 relative) over the normal range', () => {
  const values = new Float32Array([0, -0.25, 1e-4, 0.0123, 0.5, 3.14159, -9.085, 123.4, 30000, 1e-6]);
  const back = decodeHalf(encodeHalf(values), values.length);
  for (let k = 0; k < values.length; k++) {
    const v = at(values, k);
    const tol = Math.abs(v) >= 2 ** -14 ? Math.abs(v) * 2 ** -11 : 2 ** -25;
    assert.ok(Math.abs(at(back, k) - v) <= tol, `${v} came back as ${back[k]}`);
  }
  const special = decodeHalf(new Uint16Array([0x7c00, 0xfc00, 0x7e00, 0x8000]), 4);
  assert.deepEqual([special[0], special[1], Number.isNaN(special[2]), Object.is(special[3], -0)], [Infinity, -Infinity, true, true]);
});

test('decodeHalf refuses a payload of the wrong size', () => {
  assert.throws(() => decodeHalf(new Uint16Array(3).buffer, 4), /3 halves, expected 4/);
});
