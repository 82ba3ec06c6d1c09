// The Line view's figure (webview/lens/views/line-figure.ts): the words and the lines as vector SVG, at most
// FIGURE_ROWS rows (the ones on screen past that, said in the caption), lines only where both ends are shown, each
// line's opacity the view's, text ≥ 7 pt and XML-safe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_FONT_PT } from '../../webview/common/figure';
import { FIGURE_ROWS, figureRows, layoutLineFigure, lineFigureSvg, type LineFigureSpec } from '../../webview/lens/views/line-figure';
import { levelAlpha, alphaLevel, lineAlpha } from '../../webview/lens/views/line-view-model';
import { assertWellFormedXml } from './xml-check';

/** Row i puts 0.6 on key (i + 1) mod n and 0.3 on key i, the rest spread thin (under the 2% drawn). */
function spec(n: number, window = { first: 0, last: n }): LineFigureSpec {
  const values = new Float32Array(n * n).fill(0.1 / n);
  for (let i = 0; i < n; i++) {
    values[i * n + ((i + 1) % n)] = 0.6;
    values[i * n + i] = 0.3;
  }
  return {
    values,
    n,
    labels: Array.from({ length: n }, (_, i) => (i === 2 ? 'a<b&"c"' : `word${i}`)),
    scale: { signed: false, max: 1 },
    window,
    title: 'tiny · probs · layer 1 · head 2 · lines',
    caption: 'Opacity = the attention weight itself.',
    colours: { text: '#333', pos: '#1a5fb4', neg: '#d4580a' },
    widthCm: 8,
    dpi: 300,
  };
}

test('a short input: every row, both lines of each row, each with the opacity the view gives it', () => {
  const s = spec(12);
  const l = layoutLineFigure(s);
  assert.deepEqual(l.rows, { first: 0, last: 12 });
  // 12 rows × 2 lines (0.6 and 0.3); the wrap-around line from row 11 to key 0 is inside too.
  assert.equal(l.strokes.length, 24);
  const alphas = new Set(l.strokes.map((x) => x.alpha));
  assert.deepEqual(
    [...alphas].sort(),
    [levelAlpha(alphaLevel(lineAlpha(0.3, s.scale))), levelAlpha(alphaLevel(lineAlpha(0.6, s.scale)))].sort(),
  );
  assert.ok(l.labels.every((t) => t.size >= MIN_FONT_PT));
  assert.ok(!l.labels.some((t) => /Rows \d/.test(t.text)), 'no rows note when all are shown');
  const svg = lineFigureSvg(s, '#ffffff');
  assertWellFormedXml(svg);
  assert.equal((svg.match(/<line /g) ?? []).length, 24);
  assert.ok(svg.includes('>a&#60;b&#38;&#34;c&#34;</text>'), 'labels are XML-safe');
  assert.ok(svg.includes('tiny · probs · layer 1 · head 2 · lines'));
});

test('a long input: the rows on screen, lines among them only, and the caption says which rows', () => {
  const n = 500;
  const l = layoutLineFigure(spec(n, { first: 100, last: 130 }));
  assert.deepEqual(l.rows, { first: 100, last: 130 });
  // Rows 100…129: each keeps its 0.3 line, and its 0.6 line except row 129's (to key 130, not shown).
  assert.equal(l.strokes.length, 30 + 29);
  const caption = l.labels
    .filter((t) => t.y > Math.max(...l.strokes.map((x) => Math.max(x.y1, x.y2))))
    .map((t) => t.text)
    .join(' ');
  assert.match(caption, /Rows 100–129 of 500 \(those on screen\); lines to words outside them are left out\./);
  // More rows on screen than a figure holds: FIGURE_ROWS of them from the first on screen.
  assert.deepEqual(figureRows(n, { first: 10, last: 200 }), { first: 10, last: 10 + FIGURE_ROWS });
  // At the end of the text the figure stays within it.
  assert.deepEqual(figureRows(n, { first: 495, last: 500 }), { first: 495, last: 500 });
  assert.ok(layoutLineFigure(spec(n, { first: 0, last: 500 })).height < 30 * (72 / 2.54), 'a page tall at most');
});
