// Exported figures (webview/common/figure.ts): well-formed SVG with a title, whole-word labels, a colour bar
// and its range, text as text, and labels legible in print: ≥ 7 pt at 8 cm wide with 500 tokens.
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { describeRange, lutFor, makeLut } from '../../webview/common/colors';
import { figureSvg, layoutFigure, MIN_FONT_PT, POINTS_PER_CM, type FigureSpec } from '../../webview/common/figure';
import { cleanLabel, thinLabels, wordLabels } from '../../webview/common/figure-labels';
import { mapValues } from '../../src/shared/row-scale';
import type { ProtocolToken } from '../../src/shared/protocol/token';
import { parseFigureSize } from '../../src/shared/protocol/lens';
import { assertWellFormedXml } from './xml-check';

/** Tokens of `text` cut at the given piece boundaries, with [CLS] and [SEP] around, SentencePiece-style. */
function tokens(text: string, pieces: string[]): ProtocolToken[] {
  const out: ProtocolToken[] = [{ i: 0, text: '[CLS]', start: 0, end: 0, special: true }];
  let at = 0;
  for (const p of pieces) {
    const start = text.indexOf(p.replace(/^▁/, ''), at);
    const end = start + p.replace(/^▁/, '').length;
    out.push({ i: out.length, text: p, start, end, special: false });
    at = end;
  }
  out.push({ i: out.length, text: '[SEP]', start: text.length, end: text.length, special: true });
  return out;
}

/** A probs matrix of n keys: each row peaks on a neighbour and spreads the rest. */
function probs(n: number): Float32Array {
  const v = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) v[i * n + j] = j === (i + 1) % n ? 0.5 : 0.5 / (n - 1);
  return v;
}

function spec(n: number, widthCm: number, labels?: string[]): FigureSpec {
  const { shown, range } = mapValues(probs(n), n, n, false, 'row-log');
  const words = labels ?? Array.from({ length: n }, (_, k) => (k % 3 ? '' : `word${k}`));
  return {
    values: shown,
    rows: n,
    cols: n,
    range,
    lut: lutFor('diverging', range, 'light'),
    title: 'default · probs · layer 3 · head 5',
    caption: describeRange(range, 'probs'),
    rowLabels: words,
    colLabels: words,
    widthCm,
    dpi: 300,
    theme: 'light',
  };
}

const fontSizes = (svg: string) => [...svg.matchAll(/font-size="([\d.]+)"/g)].map((m) => Number(m[1]));

test("whole words label a word's first piece; its other pieces carry none; specials keep their names", () => {
  const text = 'The dog was gragging loudly.';
  const t = tokens(text, ['▁The', '▁dog', '▁was', '▁gra', 'gging', '▁loud', 'ly', '.']);
  assert.deepEqual(wordLabels(text, t), ['[CLS]', 'The', 'dog', 'was', 'gragging', '', 'loudly.', '', '', '[SEP]']);
});

test('labels are cleaned of characters no document shows, and cut at 14 characters', () => {
  assert.equal(cleanLabel('a\u0000b\ufffe'), 'a␀b\ufffd');
  assert.equal(cleanLabel('\n"All'), '"All', 'a line break before the word is whitespace, not a label character');
  assert.equal(cleanLabel('internationalisation'), 'international…');
  assert.equal([...cleanLabel('x'.repeat(40))].length, 14);
});

test('thinning keeps labels at least a line apart and never shows a later piece', () => {
  const labels = Array.from({ length: 100 }, (_, k) => (k % 2 ? '' : `w${k}`));
  const shown = thinLabels(labels, 1, 7);
  for (let k = 1; k < shown.length; k++) assert.ok((shown[k] ?? 0) - (shown[k - 1] ?? 0) >= 8.4);
  assert.ok(shown.every((i) => labels[i]));
  assert.deepEqual(thinLabels(['a', 'b', ''], 10, 7), [0, 1]);
  assert.deepEqual(thinLabels(['a', 'b', 'c'], (7.63 * 1.2 * 7) / 7, 7.63), [0, 1, 2], 'a cell one line high, up to rounding');
});

test('SVG figure: well-formed XML with a title, the map, a colour bar with its range, labels as text', () => {
  const svg = figureSvg(spec(30, 12));
  assertWellFormedXml(svg);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="12cm"/);
  assert.match(svg, /<title>default · probs · layer 3 · head 5<\/title>/);
  assert.match(svg, /font-weight="bold">default · probs · layer 3 · head 5<\/text>/, 'the title is drawn');
  assert.match(svg, />row top<\/text>/, 'the colour bar says what its top is');
  assert.match(svg, />row floor<\/text>/);
  assert.match(svg, /each row on a log scale/, 'the caption states the scale');
  assert.match(svg, /of cells at or below/, '…and the share at the floor');
  assert.match(svg, />word3<\/text>/, 'labels are text');
  assert.match(svg, /every word labelled/);
  // 64 steps of bar on top of the map's runs and the background.
  const rects = (svg.match(/<rect /g) ?? []).length;
  assert.ok(rects >= 64 + 30 + 1, `${rects} rects`);
  assert.throws(() => figureSvg({ ...spec(30, 12), rows: 29 }), /900 values for 29×30/);
});

test('500 tokens at 8 cm: every text ≥ 7 pt, labels thinned (and the caption says how many)', () => {
  const s = spec(500, 8);
  const L = layoutFigure(s);
  assert.ok(Math.abs(L.width - 8 * POINTS_PER_CM) < 1e-9, 'the figure is 8 cm wide');
  const svg = figureSvg(s);
  assert.match(svg, /width="8cm"/);
  const sizes = fontSizes(svg);
  assert.ok(sizes.length > 20);
  assert.ok(Math.min(...sizes) >= MIN_FONT_PT, `smallest font ${Math.min(...sizes)} pt`);
  assert.ok(L.shownRows.length >= 8 && L.shownRows.length < 167, `${L.shownRows.length} row labels`);
  const rowYs = L.texts.filter((t) => t.anchor === 'end').map((t) => t.y);
  for (let k = 1; k < rowYs.length; k++) assert.ok((rowYs[k] ?? 0) - (rowYs[k - 1] ?? 0) >= 7 * 1.2 - 1e-9, 'labels do not overlap');
  const caption = L.texts
    .filter((t) => t.y > L.map.y + L.map.h)
    .map((t) => t.text)
    .join(' ');
  assert.match(caption, new RegExp(`${L.shownRows.length} of 167 words labelled`));
  // Everything inside the page.
  for (const t of L.texts) assert.ok(t.x >= 0 && t.x <= L.width && t.y >= 0 && t.y <= L.height, `"${t.text}" at ${t.x}, ${t.y}`);
  assert.ok(L.map.x + L.map.w < L.bar.x && L.bar.x + L.bar.width < L.width);
});

test('dark figures keep the dark page and light text; linear ranges show their limits on the bar', () => {
  const lut = makeLut('diverging', true, 'dark');
  const range = { min: -2, max: 2, signed: true, percentile: 99 };
  const svg = figureSvg({
    values: Float32Array.from([-3, 0, 1, 3]),
    rows: 2,
    cols: 2,
    range,
    lut,
    title: 'c2p',
    widthCm: 8,
    dpi: 300,
    theme: 'dark',
  });
  assertWellFormedXml(svg);
  assert.match(svg, /fill="#1e1e1e"/);
  assert.match(svg, /<g fill="#e6e6e6">/);
  assert.match(svg, />≥ 2<\/text>/);
  assert.match(svg, />≤ -2<\/text>|>≤ −2<\/text>/);
});

test('a large map goes into the SVG as a palette PNG that inflates to one index a cell', () => {
  const n = 300;
  const s = spec(n, 8);
  const noisy = Float32Array.from({ length: n * n }, (_, k) => ((k * 7919) % 256) / 255);
  const svg = figureSvg({ ...s, values: noisy, range: { min: 0, max: 1, signed: false } });
  assertWellFormedXml(svg);
  const b64 = /href="data:image\/png;base64,([A-Za-z0-9+/=]+)"/.exec(svg)?.[1];
  assert.ok(b64, 'the map is an embedded PNG');
  const png = Buffer.from(b64, 'base64');
  assert.equal(png.readUInt32BE(0), 0x89504e47);
  assert.equal(png.readUInt32BE(16), n, 'width');
  assert.equal(png.readUInt32BE(20), n, 'height');
  // Chunks: IHDR (13), PLTE (768), IDAT, IEND; each CRC checked by zlib's crc32 where node has it.
  const idatAt = 8 + 25 + 12 + 768;
  assert.equal(png.toString('latin1', idatAt + 4, idatAt + 8), 'IDAT');
  const raw = inflateSync(png.subarray(idatAt + 8, idatAt + 8 + png.readUInt32BE(idatAt)));
  assert.equal(raw.length, n * (n + 1));
  assert.equal(raw[0], 0, 'filter byte');
  assert.equal(raw[1 + 5], Math.round((((5 * 7919) % 256) / 255) * 255), 'cell (0, 5) is its LUT index');
  assert.ok(svg.length < 200_000, `${svg.length} characters`);
});

test("the export command's figure size: sensible numbers kept, anything else left to the panel's choice", () => {
  assert.deepEqual(parseFigureSize({ widthCm: 8, dpi: 300 }), { widthCm: 8, dpi: 300 });
  assert.deepEqual(parseFigureSize({ widthCm: '8', dpi: 5000 }), {});
  assert.deepEqual(parseFigureSize({ widthCm: 1, dpi: 36 }), { dpi: 36 });
});

test('Compare Heads as one figure: the panels side by side on one range, each titled and labelled, one colour bar', () => {
  const base = spec(30, 16);
  const other = Float32Array.from(base.values, (v) => v * 0.5);
  const s: FigureSpec = {
    ...base,
    panels: [
      { values: base.values, title: 'head 0' },
      { values: other, title: 'head 3' },
      { values: base.values, title: 'head 5' },
    ],
  };
  const L = layoutFigure(s);
  assert.equal(L.maps.length, 3);
  for (let k = 1; k < 3; k++) {
    const [a, b] = [L.maps[k - 1]!, L.maps[k]!];
    assert.equal(a.y, b.y, 'one row');
    assert.ok(a.x + a.w < b.x, 'side by side, not overlapping');
    assert.equal(a.w, b.w, 'one size');
  }
  assert.ok(L.maps[2]!.x + L.maps[2]!.w < L.bar.x && L.bar.x + L.bar.width < L.width, 'one bar, after the last map');
  const svg = figureSvg(s);
  assertWellFormedXml(svg);
  for (const t of ['head 0', 'head 3', 'head 5']) assert.match(svg, new RegExp(`font-weight="bold">${t}</text>`));
  assert.equal((svg.match(/>word3<\/text>/g) ?? []).length, 6, 'each map labelled on both axes');
  assert.equal((svg.match(/fill="none" stroke=/g) ?? []).length, 3, 'each map framed');
  for (const t of L.texts) assert.ok(t.x >= 0 && t.x <= L.width && t.y >= 0 && t.y <= L.height, `"${t.text}" at ${t.x}, ${t.y}`);
  assert.ok(Math.min(...fontSizes(svg)) >= MIN_FONT_PT);
  // Two rows of two: the second row under the first, the caption under both.
  const grid = layoutFigure({ ...s, panels: [...s.panels!, { values: other, title: 'head 7' }], panelColumns: 2 });
  assert.equal(grid.maps[2]!.x, grid.maps[0]!.x);
  assert.ok(grid.maps[2]!.y > grid.maps[0]!.y + grid.maps[0]!.h);
  const captionTop = Math.min(...grid.texts.filter((t) => /every word|words labelled/.test(t.text)).map((t) => t.y));
  assert.ok(captionTop > grid.maps[3]!.y + grid.maps[3]!.h);
  assert.throws(() => figureSvg({ ...s, panels: [{ values: new Float32Array(5), title: 'x' }] }), /5 values for 30×30/);
});
