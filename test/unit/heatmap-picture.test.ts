// A long input's heatmap sent as colour-ramp steps pooled to the screen's side: unpooled, the steps are what the
// view's own mapping paints, cell for cell, for every scaling and term; pooled, each pixel is its block's strongest
// cell, so a one-cell peak survives. Matrices: the fixture result's HF-computed terms, and made-up ones with the
// values that break naive code (NaN, ±Infinity, rows of zeros).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRange, paintMatrix } from '../../webview/common/colors';
import { blockOf, pooledSteps } from '../../src/shared/heatmap-picture';
import { mapValues } from '../../src/shared/row-scale';
import { SCALINGS, type ScalingName } from '../../src/shared/protocol/lens-names';
import { isSignedKind } from '../../src/shared/kinds';
import { withExactExtent, finiteExtent } from '../../src/shared/value-range';
import { fixtureResult } from './analysis-fixture';

/** A LUT whose red channel is the step itself: paintMatrix then writes each cell's step. */
const STEP_LUT = Uint8ClampedArray.from({ length: 256 * 4 }, (_, k) => (k % 4 === 0 ? k / 4 : 255));

/** The steps the view paints for `values` (its own mapping, no pooling). */
function viewSteps(values: Float32Array, n: number, signed: boolean, scaling: ScalingName): Uint8Array {
  const { shown, range } = mapValues(values, n, n, signed, scaling);
  const rgba = new Uint8ClampedArray(n * n * 4);
  paintMatrix(shown, range, STEP_LUT, rgba);
  return Uint8Array.from({ length: n * n }, (_, k) => rgba[k * 4] ?? 0);
}

/** Reference pooling by brute force: the block's largest step, or (signed) the one farthest from the middle (a tie: the larger). */
function poolByHand(steps: Uint8Array, n: number, side: number, signed: boolean): Uint8Array {
  const rb = blockOf(n, side);
  const out = new Uint8Array(side * side).fill(signed ? 128 : 0);
  const set = new Uint8Array(side * side);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const k = (rb[i] ?? 0) * side + (rb[j] ?? 0);
      const s = steps[i * n + j] ?? 0;
      const cur = out[k] ?? 0;
      const d = Math.abs(s - 127.5) - Math.abs(cur - 127.5);
      if (!set[k] || (signed ? d > 0 || (d === 0 && s > cur) : s > cur)) out[k] = s;
      set[k] = 1;
    }
  return out;
}

function made(n: number, seed: number, signed: boolean): Float32Array {
  let x = seed;
  const r = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
  const v = Float32Array.from({ length: n * n }, () => (signed ? (r() - 0.5) * 20 : r() ** 6));
  if (!signed)
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += v[i * n + j] ?? 0;
      for (let j = 0; j < n; j++) v[i * n + j] = (v[i * n + j] ?? 0) / s;
    }
  v[3] = NaN;
  v[n + 1] = signed ? -Infinity : 0;
  v[2 * n + 5] = signed ? Infinity : 1;
  if (n > 8) v.fill(0, 7 * n, 8 * n); // a row of zeros
  return v;
}

const result = fixtureResult('text0');
const cases: { name: string; values: Float32Array; n: number; signed: boolean }[] = [];
for (const kind of ['probs', 'c2c', 'c2p', 'p2c'] as const)
  cases.push({ name: `fixture ${kind}`, values: result.slice(0, 1, kind), n: result.n, signed: isSignedKind(kind) });
cases.push({ name: 'made-up probs', values: made(61, 7, false), n: 61, signed: false });
cases.push({ name: 'made-up signed', values: made(61, 9, true), n: 61, signed: true });
const odd = made(61, 11, false);
odd[4 * 61 + 2] = -Infinity;
odd[9 * 61 + 60] = Infinity;
cases.push({ name: 'made-up probs with ±∞', values: odd, n: 61, signed: false });

for (const c of cases)
  for (const scaling of SCALINGS) {
    test(`${c.name}, ${scaling}: unpooled steps equal the view's own paint, and the range its legend`, () => {
      const want = viewSteps(c.values, c.n, c.signed, scaling);
      const got = pooledSteps(c.values, c.n, c.signed, scaling, c.n);
      assert.equal(got.side, c.n);
      assert.deepEqual([...got.steps], [...want]);
      const { range } = mapValues(c.values, c.n, c.n, c.signed, scaling);
      assert.deepEqual(got.range, withExactExtent(range, finiteExtent(c.values)));
    });
    const summed = !c.signed && (scaling === 'row' || scaling === 'row-log');
    test(`${c.name}, ${scaling}: pooled, ${summed ? "the largest of a pixel's query rows, each summed over its keys" : "each pixel is its block's strongest cell"}`, () => {
      const full = viewSteps(c.values, c.n, c.signed, scaling);
      for (const side of [1, 2, Math.floor(c.n / 3), c.n - 1]) {
        if (side < 1) continue;
        const got = pooledSteps(c.values, c.n, c.signed, scaling, side);
        if (!summed) {
          assert.deepEqual([...got.steps], [...poolByHand(full, c.n, side, c.signed)], `side ${side}`);
          assert.equal(got.pooling, 'max');
          continue;
        }
        // Each query row over `side` key groups (sums of its keys' weights), mapped by the view's own code with
        // `keys` = side; then the pixel row takes the largest of its queries.
        const cols = blockOf(c.n, side);
        const groups = new Float32Array(c.n * side);
        // Sums in float64 as the keys come, stored as float32: the same as the host's.
        for (let i = 0; i < c.n; i++)
          for (let k = 0; k < side; k++) {
            let sum = 0;
            let seen = false;
            for (let j = 0; j < c.n; j++)
              if (cols[j] === k && !Number.isNaN(c.values[i * c.n + j] ?? NaN)) {
                sum += c.values[i * c.n + j] ?? 0;
                seen = true;
              }
            groups[i * side + k] = seen ? sum : NaN;
          }
        const { shown, range } = mapValues(groups, c.n, side, false, scaling, side);
        const rgba = new Uint8ClampedArray(c.n * side * 4);
        paintMatrix(shown, range, STEP_LUT, rgba);
        const rows = blockOf(c.n, side);
        const want = new Uint8Array(side * side);
        for (let i = 0; i < c.n; i++)
          for (let k = 0; k < side; k++) {
            const at = (rows[i] ?? 0) * side + k;
            want[at] = Math.max(want[at] ?? 0, rgba[(i * side + k) * 4] ?? 0);
          }
        assert.deepEqual([...got.steps], [...want], `side ${side}`);
        const groupsRange = range.rowLog && side < c.n ? { ...range, rowLog: { ...range.rowLog, pooledFrom: c.n } } : range;
        assert.deepEqual(got.range, groupsRange, `side ${side}: the legend describes the key groups`);
        if (range.rowLog && side < c.n)
          assert.match(describeRange(got.range, 'probs'), /^probs summed over \d+ groups of the \d+ keys, each row on a log scale/);
        assert.equal(got.pooling, 'sum');
      }
    });
  }

test('a one-cell peak in a 900-token uniform map is still a full-strength pixel at 300 px', () => {
  const n = 900;
  const v = new Float32Array(n * n).fill(1 / n);
  v[500 * n + 123] = 0.5;
  const { steps, side } = pooledSteps(v, n, false, 'row-log', 300);
  assert.equal(steps[Math.floor(500 / 3) * side + Math.floor(123 / 3)], 255);
  assert.equal(
    Math.max(...steps) === 255 && steps.filter((s) => s > 0).length,
    1,
    'only the peak is coloured: uniform rows sit at their floor',
  );
});

test('a side outside 1..n is refused', () => {
  assert.throws(() => pooledSteps(new Float32Array(4), 2, false, 'linear', 3), /picture side 3 must be 1\.\.2/);
  assert.throws(() => pooledSteps(new Float32Array(4), 2, false, 'linear', 0), /picture side 0/);
});
