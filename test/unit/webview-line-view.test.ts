import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ALPHA_LEVELS,
  alphaLevel,
  clipLabel,
  contentHeight,
  lineAlpha,
  linesPerWord,
  linesToDraw,
  levelAlpha,
  rowAt,
  rowCentre,
  rowMaxima,
  strongest,
  visibleWindow,
  type LineLayout,
} from '../../webview/lens/views/line-view-model';

const L = (n: number): LineLayout => ({ n, rowH: 16, pad: 6 });

/** Pairs of every level and sign as "i>j" strings, for set comparisons. */
function drawn(p: number[][][]): Set<string> {
  const out = new Set<string>();
  for (const bySign of p) for (const ij of bySign) for (let k = 0; k < ij.length; k += 2) out.add(`${ij[k]}>${ij[k + 1]}`);
  return out;
}

test('virtual window: the rows on screen plus the overscan, clamped to the text', () => {
  const l = L(500);
  assert.equal(contentHeight(l), 8012);
  // 400 px at the top: rows 0..24 on screen (row 24 ends at 406), 2 more below.
  assert.deepEqual(visibleWindow(l, 0, 400), { first: 0, last: 27 });
  // Scrolled to row 100's top edge (6 + 1600): rows 100..125, two either side.
  assert.deepEqual(visibleWindow(l, 1606, 400), { first: 98, last: 127 });
  // The end: never past n.
  assert.deepEqual(visibleWindow(l, 8012 - 400, 400), { first: 473, last: 500 });
  assert.deepEqual(visibleWindow(L(0), 0, 400), { first: 0, last: 0 });
  // A window is a few dozen rows whatever the length: what makes 500 tokens cost what 50 do.
  const w = visibleWindow(L(5000), 40_000, 600);
  assert.ok(w.last - w.first <= 600 / 16 + 6, `${w.first}..${w.last}`);
});

test('row under the pointer and row centres agree; padding and past-the-end are no row', () => {
  const l = L(10);
  for (let k = 0; k < 10; k++) assert.equal(rowAt(l, rowCentre(l, k)), k);
  assert.equal(rowAt(l, 3), undefined);
  assert.equal(rowAt(l, 6 + 160 + 1), undefined);
});

test('opacity is the weight for probs (no saturation), |v| over the robust limit for signed terms', () => {
  const probs = { signed: false, max: 1 };
  assert.equal(lineAlpha(0.3, probs), 0.3);
  assert.equal(lineAlpha(0.15, probs), 0.15);
  assert.equal(lineAlpha(1.2, probs), 1);
  assert.equal(lineAlpha(NaN, probs), 0);
  const signed = { signed: true, max: 4 };
  assert.equal(lineAlpha(-2, signed), 0.5);
  assert.equal(lineAlpha(8, signed), 1);
  assert.equal(lineAlpha(1, { signed: true, max: 0 }), 0);
  // Levels keep order: a weight 1.5× another is never drawn fainter, and twice it is at a higher level.
  for (const [a, b] of [
    [0.3, 0.15],
    [0.12, 0.06],
    [0.9, 0.45],
  ] as const) {
    assert.ok(alphaLevel(a) > alphaLevel(b), `${a} vs ${b}`);
    assert.ok(levelAlpha(alphaLevel(a)) >= a - 1 / ALPHA_LEVELS && levelAlpha(alphaLevel(a)) <= a + 1 / ALPHA_LEVELS);
  }
  assert.equal(alphaLevel(0.01), -1, 'too faint to draw');
  assert.equal(alphaLevel(1), ALPHA_LEVELS - 1);
});

test('relative opacity: each line over its query row’s largest, so a spread-out row still shows its order', () => {
  const n = 3;
  // Row 0: weights all under 2% (invisible as weights); row 1: signed.
  const v = Float32Array.from([0.008, 0.004, 0.012, -3, 1.5, 0, 0, 0, 0]);
  const probs = { signed: false, max: 1, rowMax: rowMaxima(v, n, false) };
  assert.equal(alphaLevel(lineAlpha(0.012, { signed: false, max: 1 })), -1, 'as a weight: not drawn');
  assert.equal(lineAlpha(v[2]!, probs, 0), 1);
  assert.ok(Math.abs(lineAlpha(v[1]!, probs, 0) - 1 / 3) < 1e-6);
  const signed = { signed: true, max: 10, rowMax: rowMaxima(v, n, true) };
  assert.equal(signed.rowMax[1], 3);
  assert.equal(lineAlpha(1.5, signed, 1), 0.5);
  assert.equal(lineAlpha(0, signed, 2), 0, 'an all-zero row draws nothing');
  assert.equal(linesToDraw(v, n, { first: 0, last: 1 }, { signed: false, max: 1 }, { side: 'query', k: 0 }).count, 0);
  assert.equal(linesToDraw(v, n, { first: 0, last: 1 }, probs, { side: 'query', k: 0 }).count, 3);
});

test('lines to draw: the window’s rows to every key, off-screen queries only to keys in view', () => {
  const n = 6;
  const v = new Float32Array(n * n).fill(0.5);
  v[0 * n + 5] = 0.001; // too faint
  const { pairs, count } = linesToDraw(v, n, { first: 0, last: 2 }, { signed: false, max: 1 });
  const got = drawn(pairs);
  assert.equal(got.size, count);
  assert.ok(!got.has('0>5'), 'faint line left out');
  assert.ok(got.has('1>5'), 'a row in view reaches a key out of view');
  assert.ok(got.has('4>1'), 'an off-screen query reaches a key in view');
  assert.ok(!got.has('4>3'), 'both ends out of view: not drawn');
  // 2 rows × 6 keys − 1 faint + 4 other rows × 2 keys in view.
  assert.equal(count, 2 * 6 - 1 + 4 * 2);
});

test('without a focus, each word in view keeps only its strongest lines', () => {
  const n = 50;
  // Row i's weight to key j grows with j: the strongest keys are the last ones.
  const v = Float32Array.from({ length: n * n }, (_, k) => 0.05 + ((k % n) / n) * 0.9);
  const { pairs, count } = linesToDraw(v, n, { first: 10, last: 11 }, { signed: false, max: 1 }, undefined, 3);
  const got = drawn(pairs);
  // Row 10: keys 47, 48, 49; key 10: its strongest off-screen query (a quarter of 3, rounded up; all equal: any).
  for (const j of [47, 48, 49]) assert.ok(got.has(`10>${j}`), `10>${j}`);
  assert.ok(!got.has('10>46'));
  assert.equal(count, 4);
  // A focus is never capped: the whole row.
  assert.equal(linesToDraw(v, n, { first: 10, last: 11 }, { signed: false, max: 1 }, { side: 'query', k: 10 }, 3).count, n);
});

test('signed terms keep fewer lines per word than probs', () => {
  assert.ok(linesPerWord(true) < linesPerWord(false));
});

test('a hovered word isolates its row (query) or its column (key), signs apart', () => {
  const n = 4;
  const v = Float32Array.from({ length: n * n }, (_, k) => (k % 2 ? -1 : 1) * ((k % n) + 1));
  const scale = { signed: true, max: 4 };
  const row = linesToDraw(v, n, { first: 0, last: 0 }, scale, { side: 'query', k: 2 });
  assert.deepEqual([...drawn(row.pairs)].sort(), ['2>0', '2>1', '2>2', '2>3']);
  const col = linesToDraw(v, n, { first: 0, last: 4 }, scale, { side: 'key', k: 1 });
  assert.deepEqual([...drawn(col.pairs)].sort(), ['0>1', '1>1', '2>1', '3>1']);
  // Column 1 holds negative values: all in the second (negative) sign bucket.
  assert.equal(
    col.pairs.reduce((a, s) => a + (s[0]?.length ?? 0), 0),
    0,
  );
  assert.equal(linesToDraw(v, n, { first: 0, last: 4 }, scale, { side: 'query', k: 9 }).count, 0);
});

test('strongest ends of a row or column, by |value|', () => {
  const n = 3;
  const v = Float32Array.from([0.1, 0.7, 0.2, -3, 1, 2, 0, 0, 0]);
  assert.deepEqual(strongest(v, n, { side: 'query', k: 0 }, 2), [
    [1, v[1]],
    [2, v[2]],
  ]);
  assert.deepEqual(strongest(v, n, { side: 'key', k: 0 }, 1), [[1, -3]]);
});

test('labels are cut with an ellipsis to the column', () => {
  assert.equal(clipLabel('riverbank', 20), 'riverbank');
  assert.equal(clipLabel('extraordinarily', 6), 'extra…');
});
