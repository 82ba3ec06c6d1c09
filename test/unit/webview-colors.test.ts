import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colorOf, lutIndex, LUT_SIZE, makeLut, paintMatrix, valueRange } from '../../webview/colors';
import { formatValue } from '../../src/shared/format';
import { isSignedKind } from '../../src/shared/kinds';

test('signed ranges are symmetric around 0 so 0 maps to the diverging midpoint', () => {
  const r = valueRange(new Float32Array([-1, 0.5, 3]), true);
  assert.deepEqual(r, { min: -3, max: 3, signed: true });
  const lut = makeLut('diverging', true);
  assert.equal(lutIndex(0, r), 128); // round(0.5 * 255)
  const [R, G, B] = colorOf(0, r, lut);
  assert.ok(R > 240 && G > 240 && B > 240, `0 is near-white, got ${R},${G},${B}`);
  const neg = colorOf(-3, r, lut);
  const pos = colorOf(3, r, lut);
  assert.ok(neg[2] > neg[0], 'negative end is blue');
  assert.ok(pos[0] > pos[2], 'positive end is red');
});

test('probability ranges start at 0 and use a sequential ramp', () => {
  const r = valueRange(new Float32Array([0.1, 0.7, 0.2]), false);
  assert.deepEqual(r, { min: 0, max: r.max, signed: false });
  assert.ok(Math.abs(r.max - 0.7) < 1e-6);
  assert.equal(isSignedKind('probs'), false);
  assert.equal(isSignedKind('c2p'), true);
  const lut = makeLut('diverging', false);
  const lo = colorOf(0, r, lut);
  const hi = colorOf(0.7, r, lut);
  assert.ok(lo[0] + lo[1] + lo[2] > hi[0] + hi[1] + hi[2], 'larger probabilities are darker');
});

test('viridis LUT runs dark purple to yellow and has 256 opaque entries', () => {
  const lut = makeLut('viridis', false);
  assert.equal(lut.length, LUT_SIZE * 4);
  assert.deepEqual([...lut.subarray(0, 4)], [68, 1, 84, 255]);
  assert.deepEqual([...lut.subarray(255 * 4, 256 * 4)], [253, 231, 37, 255]);
  for (let k = 3; k < lut.length; k += 4) assert.equal(lut[k], 255);
});

test('valueRange ignores non-finite values and survives empty or constant input', () => {
  assert.deepEqual(valueRange(new Float32Array([-Infinity, 2, NaN]), true), { min: -2, max: 2, signed: true });
  assert.deepEqual(valueRange(new Float32Array([]), false), { min: 0, max: 1, signed: false });
  assert.deepEqual(valueRange(new Float32Array([0, 0]), true), { min: -1, max: 1, signed: true });
});

test('paintMatrix writes one RGBA pixel per cell, clamping out-of-range values', () => {
  const lut = makeLut('diverging', true);
  const range = { min: -1, max: 1, signed: true };
  const values = new Float32Array([-5, 0, 5, NaN]);
  const out = new Uint8ClampedArray(16);
  paintMatrix(values, range, lut, out);
  assert.deepEqual([...out.subarray(0, 4)], [...lut.subarray(0, 4)]);
  assert.deepEqual([...out.subarray(8, 12)], [...lut.subarray(255 * 4, 256 * 4)]);
  assert.deepEqual([...out.subarray(12, 16)], [...out.subarray(4, 8)], 'NaN paints as the midpoint, like 0');
  assert.throws(() => paintMatrix(values, range, lut, new Uint8ClampedArray(8)), /too small/);
});

test('paintMatrix handles 512×512 in one pass quickly enough for interactive use', () => {
  const n = 512;
  const values = Float32Array.from({ length: n * n }, (_, k) => Math.sin(k));
  const out = new Uint8ClampedArray(n * n * 4);
  const lut = makeLut('viridis', true);
  const t0 = performance.now();
  paintMatrix(values, valueRange(values, true), lut, out);
  const ms = performance.now() - t0;
  assert.ok(out[(n * n - 1) * 4 + 3] === 255);
  // Not a benchmark: a generous bound that only an accidental per-cell allocation would break.
  assert.ok(ms < 1000, `painting took ${ms} ms`);
});

test('formatValue gives short, exact-enough numbers', () => {
  assert.equal(formatValue(0), '0');
  assert.equal(formatValue(0.123456), '0.1235');
  assert.equal(formatValue(-12.3456), '-12.35');
  assert.equal(formatValue(1e-5), '1.00e-5');
  assert.equal(formatValue(-Infinity), '−∞');
});
