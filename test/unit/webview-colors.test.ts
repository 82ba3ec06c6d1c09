import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deltaE } from './color-distance';
import { colorOf, describeRange, makeLut, paintMatrix } from '../../webview/common/colors';
import { lutIndex, LUT_SIZE, normaliseRows, robustRange, valueRange } from '../../src/shared/value-range';
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

test('robust limits: the 99th percentile sets the end colour, so one outlier cannot wash out the map', () => {
  // 10,000 cells of 0..0.01 and 10 cells of 1 (the [SEP]-like outliers).
  const values = Float32Array.from({ length: 10_010 }, (_, k) => (k < 10_000 ? (k % 100) / 10_000 : 1));
  const r = robustRange(values, false);
  assert.equal(r.percentile, 99);
  assert.ok(r.max > 0.0095 && r.max <= 0.01, `p99 ≈ 0.0099, got ${r.max}`);
  assert.equal(r.exact?.max, 1);
  assert.match(describeRange(r, 'probs'), /99th percentile.*data 0 … 1/);
  // Under 0-to-max the bulk would sit in the first 1% of the ramp; under p99 its median is mid-ramp.
  assert.ok(lutIndex(0.005, r) > 100 && lutIndex(0.005, valueRange(values, false)) < 3);
  const signed = robustRange(
    Float32Array.from(values, (v, k) => (k % 2 ? -v : v)),
    true,
  );
  assert.equal(signed.min, -signed.max);
  assert.match(describeRange(signed, 'c2p'), /centred at 0.*percentile of \|value\|/);
});

test('log scale spans four decades below the 99.9th percentile; zeros take the low end', () => {
  const values = Float32Array.from({ length: 1000 }, (_, k) => (k === 0 ? 0 : 10 ** -(k % 7)));
  const r = robustRange(values, false, 'log');
  assert.ok(r.log);
  assert.ok(Math.abs(r.max - 1) < 1e-6 && Math.abs(r.min - 1e-4) < 1e-9, JSON.stringify(r));
  assert.equal(lutIndex(0, r), 0);
  assert.equal(lutIndex(1e-2, r), Math.round((2 / 4) * 255));
  const out = new Uint8ClampedArray(values.length * 4);
  paintMatrix(values, r, makeLut('diverging', false), out);
  assert.equal(out[3], 255);
});

test('per-row scaling divides each row by its largest |value|', () => {
  const rows = normaliseRows(Float32Array.from([1, 2, 4, -3, 1.5, 0, 0, 0, 0]), 3, 3);
  assert.deepEqual([...rows], [0.25, 0.5, 1, -1, 0.5, 0, 0, 0, 0]);
  assert.match(describeRange(robustRange(rows, true, 'row'), 'c2c'), /each row/);
});

test('the dark theme ramps start dark (no glare) and the light ones start at the light page', () => {
  const dark = makeLut('diverging', false, 'dark');
  const light = makeLut('diverging', false, 'light');
  assert.ok((dark[0] ?? NaN) + (dark[1] ?? NaN) + (dark[2] ?? NaN) < 100, 'dark sequential starts near black');
  assert.ok((light[0] ?? NaN) + (light[1] ?? NaN) + (light[2] ?? NaN) > 720, 'light sequential starts near white');
  const mid = 128 * 4;
  const darkDiv = makeLut('diverging', true, 'dark');
  assert.ok((darkDiv[mid] ?? NaN) + (darkDiv[mid + 1] ?? NaN) + (darkDiv[mid + 2] ?? NaN) < 150, 'dark diverging is dark at 0');
});

test('the dark probs ramp leaves a dark page as slowly as the light ramp leaves a white one', () => {
  // Default Dark Modern / Light Modern editor backgrounds. A dark ramp that leaves the page early paints the
  // ~1/n floor of every probs row as signal (the 500-token map was 96% "visible" in dark, 37% in light).
  const pages = { dark: [31, 31, 31], light: [255, 255, 255] } as const;
  const curve = (theme: 'dark' | 'light') => {
    const lut = makeLut('diverging', false, theme);
    return Array.from({ length: LUT_SIZE }, (_, k) =>
      deltaE([lut[4 * k] ?? NaN, lut[4 * k + 1] ?? NaN, lut[4 * k + 2] ?? NaN], pages[theme]),
    );
  };
  const dark = curve('dark');
  const light = curve('light');
  for (const t of [0.02, 0.05, 0.1, 0.15, 0.2]) {
    const k = Math.round(t * (LUT_SIZE - 1));
    assert.ok(
      Math.abs((dark[k] ?? NaN) - (light[k] ?? NaN)) <= 5,
      `at ${t}: ΔE to the page ${(dark[k] ?? NaN).toFixed(1)} (dark) vs ${(light[k] ?? NaN).toFixed(1)} (light)`,
    );
  }
  const firstVisible = (c: number[]) => c.findIndex((d) => d >= 10) / (LUT_SIZE - 1);
  assert.ok(
    Math.abs(firstVisible(dark) - firstVisible(light)) <= 0.04,
    `ΔE 10 reached at ${firstVisible(dark)} (dark), ${firstVisible(light)} (light)`,
  );
  assert.ok((dark[LUT_SIZE - 1] ?? NaN) > 80 && (light[LUT_SIZE - 1] ?? NaN) > 80, 'both ramps end far from the page');
});
