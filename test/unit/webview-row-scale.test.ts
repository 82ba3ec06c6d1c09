// The default probs colour scale (each row on a log scale): brightness ranks the keys of a row at every length.
// Colour differences are measured here in CIELAB with the test's own conversion, on the ramps the panel paints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deltaE } from './color-distance';
import { colorOf, describeRange, lutFor, type ThemeKind } from '../../webview/common/colors';
import { robustRange } from '../../src/shared/value-range';
import { effectiveScaling, mapValues, rowLogLimits, rowLogPositions } from '../../src/shared/row-scale';

/** A probability row of n keys: `top` at the front, the rest of the mass spread evenly. */
function row(n: number, top: number[]): Float32Array {
  const rest = (1 - top.reduce((a, v) => a + v, 0)) / (n - top.length);
  return Float32Array.from({ length: n }, (_, j) => top[j] ?? rest);
}

/** The colours the panel paints a one-row map with (default scale, theme's ramp). */
function colours(values: Float32Array, theme: ThemeKind, scale: 'diverging' | 'viridis' = 'diverging') {
  const { shown, range } = mapValues(values, 1, values.length, false, effectiveScaling(undefined, false));
  const lut = lutFor(scale, range, theme);
  return [...shown].map((v) => colorOf(v, range, lut));
}

for (const theme of ['light', 'dark'] as const) {
  test(`${theme}: weights 0.30 / 0.18 / 0.12 / 0.02 in a 500-key row get clearly different colours`, () => {
    const c = colours(row(500, [0.3, 0.18, 0.12, 0.02]), theme);
    for (let a = 0; a < 4; a++)
      for (let b = a + 1; b < 4; b++)
        assert.ok(deltaE(c[a] ?? [], c[b] ?? []) >= 10, `keys ${a}, ${b}: ΔE ${deltaE(c[a] ?? [], c[b] ?? [])}`);
    // The old default (linear to the 99th percentile) gave the three largest one colour.
    const old = robustRange(row(500, [0.3, 0.18, 0.12, 0.02]), false);
    assert.ok(old.max < 0.12, 'the 99th-percentile limit sits below 0.12: why the default changed');
  });

  for (const n of [30, 130, 500, 2000])
    test(`${theme}, ${n} keys: every 1.5× step among a row's top 5 is ≥ ΔE 10, wherever the top sits`, () => {
      for (const peak of [0.9, 0.5, 0.2, 30 / n, 12 / n]) {
        if (peak * 1.9 >= 1) continue;
        // Top 5 each 1.5× below the one before, above the row's floor (peak / 10^1.5 and 1/n).
        const top = [peak, peak / 1.5, peak / 2.25, peak / 3.375, peak / 5.0625];
        const { lo } = rowLogLimits(peak, n);
        const c = colours(row(n, top), theme);
        for (let k = 0; k + 1 < 5; k++) {
          if (!((top[k + 1] ?? 0) > lo)) continue;
          const d = deltaE(c[k] ?? [], c[k + 1] ?? []);
          assert.ok(
            d >= 10,
            `peak ${peak.toFixed(4)}: keys ${k} and ${k + 1} (${top[k]?.toFixed(4)} vs ${top[k + 1]?.toFixed(4)}) ΔE ${d.toFixed(1)}`,
          );
        }
      }
    });

  test(`${theme}: any two weights of a row 1.5× apart above its floor are ≥ ΔE 10 apart (the ramp's low end too)`, () => {
    const n = 500;
    const { lo, hi } = rowLogLimits(0.6, n);
    const weights: number[] = [];
    for (let v = hi; v / 1.5 > lo; v /= 1.04) weights.push(v, v / 1.5);
    const values = new Float32Array(n);
    weights.slice(0, n).forEach((v, j) => (values[j] = v));
    const c = colours(values, theme);
    for (let k = 0; k + 1 < Math.min(n, weights.length); k += 2) {
      const d = deltaE(c[k] ?? [], c[k + 1] ?? []);
      assert.ok(d >= 10, `${weights[k]?.toFixed(4)} vs ${weights[k + 1]?.toFixed(4)}: ΔE ${d.toFixed(1)}`);
    }
  });

  test(`${theme}: a row spread evenly stays at the page colour; a real peak does not`, () => {
    const flat = colours(row(500, []), theme);
    const peaked = colours(row(500, [0.9]), theme);
    assert.ok(deltaE(flat[0] ?? [], flat[100] ?? []) < 1 && deltaE(flat[0] ?? [], peaked[100] ?? []) < 1, 'uniform keys take the low end');
    assert.ok(deltaE(peaked[0] ?? [], peaked[100] ?? []) > 50, 'the peak is far from the page');
  });
}

test('viridis under the default scale ranks a 500-key row too', () => {
  const c = colours(row(500, [0.3, 0.18, 0.12, 0.02]), 'light', 'viridis');
  for (let a = 0; a < 3; a++) assert.ok(deltaE(c[a] ?? [], c[a + 1] ?? []) >= 10);
});

test('row limits: top at least 10/n, floor 10^1.5 below it and at least 1/n; positions clip at the floor', () => {
  assert.deepEqual(rowLogLimits(0.001, 500), { lo: 1 / 500, hi: 10 / 500 });
  const { lo, hi } = rowLogLimits(0.9, 500);
  assert.ok(Math.abs(hi - 0.9) < 1e-12 && Math.abs(lo - 0.9 / 10 ** 1.5) < 1e-12);
  assert.deepEqual(rowLogLimits(0.5, 4), { lo: 1 / 4, hi: 1 }, 'a short row: top limit at most 1');
  const { positions, clipped } = rowLogPositions(
    Float32Array.from({ length: 40 }, (_, j) => [0.9, 0.05, 0.05][j] ?? 0),
    1,
    40,
  );
  assert.equal(positions[0], 1);
  assert.ok((positions[1] ?? 0) > 0.1 && (positions[1] ?? 1) < 0.5, `0.05 on the way up: ${positions[1]}`);
  assert.equal(positions[3], 0);
  assert.equal(clipped, 37 / 40, 'the zeros are at or below the floor');
  assert.ok(Number.isNaN(rowLogPositions(Float32Array.from([NaN, 1]), 1, 2).positions[0]));
});

test('the default mapping: probs each row on a log scale, signed terms linear; the legend states the clipped share', () => {
  assert.equal(effectiveScaling(undefined, false), 'row-log');
  assert.equal(effectiveScaling(undefined, true), 'linear');
  assert.equal(effectiveScaling('row-log', true), 'row');
  assert.equal(effectiveScaling('linear', false), 'linear');
  const { range } = mapValues(row(500, [0.3, 0.18]), 1, 500, false, 'row-log');
  const text = describeRange(range, 'probs');
  assert.match(text, /each row on a log scale/);
  assert.match(text, /\d+(\.\d)?% of cells at or below their row's floor/);
});
