import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cellIn, centreOn, fit, labelStride, pan, reveal, zoomAt } from '../../webview/common/viewport';

test('fit shows every row; the cell under a point matches the old full-matrix geometry', () => {
  const v = fit(500);
  assert.deepEqual(v, { n: 500, span: 500, r0: 0, c0: 0 });
  assert.deepEqual(cellIn(v, 0, 0, 500), { i: 0, j: 0 });
  assert.deepEqual(cellIn(v, 499.9, 250.2, 500), { i: 250, j: 499 });
  assert.equal(cellIn(v, -1, 3, 500), null);
  assert.equal(cellIn(v, 3, 500, 500), null);
});

test('zoom keeps the cell under the pointer where it was, and stays inside the matrix', () => {
  const v = zoomAt(fit(500), 4, 0.25, 0.75);
  assert.equal(v.span, 125);
  // The pointer was over column 125, row 375: still at the same fractions of the view (the window starts at a
  // whole cell, so within one cell).
  assert.ok(Math.abs(v.c0 + 0.25 * v.span - 125) < 1);
  assert.ok(Math.abs(v.r0 + 0.75 * v.span - 375) < 1);
  const edge = zoomAt(fit(500), 4, 1, 1);
  assert.equal(edge.r0 + edge.span, 500, 'zooming at the corner never shows past the last row');
  assert.equal(zoomAt(fit(10), 100).span, 4, 'never fewer than 4 cells across');
  assert.equal(zoomAt(v, 1 / 100).span, 500, 'zooming out stops at the whole matrix');
});

test('pan, reveal and centreOn clamp to the matrix; a zoomed view maps points to shifted cells', () => {
  const v = { n: 100, span: 10, r0: 20, c0: 30 };
  assert.deepEqual(pan(v, -50, 500), { n: 100, span: 10, r0: 0, c0: 90 });
  assert.deepEqual(reveal(v, 35, 31), { n: 100, span: 10, r0: 26, c0: 30 });
  assert.deepEqual(reveal(v, 5, null), { n: 100, span: 10, r0: 5, c0: 30 });
  assert.deepEqual(centreOn(v, 99, 0), { n: 100, span: 10, r0: 90, c0: 0 });
  assert.deepEqual(cellIn(v, 0, 0, 200), { i: 20, j: 30 });
  assert.deepEqual(cellIn(v, 199, 199, 200), { i: 29, j: 39 });
});

test('labelStride: every row when cells are tall enough, else every k-th', () => {
  assert.equal(labelStride(12, 12), 1);
  assert.equal(labelStride(1.5, 12), 8);
});
