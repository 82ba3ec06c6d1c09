// Compare Models as one figure (webview/compare/export-figure.ts, figure.ts figureRowSvg): each side with its own
// tokens, range and colour bar side by side under one title, well-formed SVG; and the export message the host
// accepts (src/shared/protocol/compare.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompareInit, CompareSide } from '../../src/shared/protocol/compare';
import { parseCompareMessage } from '../../src/shared/protocol/compare';
import type { ProtocolToken } from '../../src/shared/protocol/token';
import { layoutFigureRow, figureRowSvg } from '../../webview/common/figure';
import { compareFigureName, compareFigureSpecs } from '../../webview/compare/export-figure';
import { assertWellFormedXml } from './xml-check';

const TEXT = 'The lazy dog sleeps.';
function toks(pieces: [string, number, number][]): ProtocolToken[] {
  return [
    { i: 0, text: '[CLS]', start: 0, end: 0, special: true },
    ...pieces.map(([text, start, end], k) => ({ i: k + 1, text, start, end, special: false })),
    { i: pieces.length + 1, text: '[SEP]', start: TEXT.length, end: TEXT.length, special: true },
  ];
}
const side = (name: string, architecture: 'deberta' | 'bert', tokens: ProtocolToken[]): CompareSide => ({
  name,
  path: `/models/${name}`,
  type: architecture === 'bert' ? 'bert' : 'deberta-v2',
  architecture,
  layers: [0, 1],
  heads: 2,
  terms: architecture === 'bert' ? [] : ['c2c', 'c2p', 'p2c'],
  decomposition: architecture === 'bert',
  tokens,
  ms: 10,
});
const a = side(
  'default',
  'deberta',
  toks([
    ['▁The', 0, 3],
    ['▁lazy', 4, 8],
    ['▁dog', 9, 12],
    ['▁sleep', 13, 18],
    ['s', 18, 19],
    ['.', 19, 20],
  ]),
);
const b = side(
  'bert-twin',
  'bert',
  toks([
    ['the', 0, 3],
    ['lazy', 4, 8],
    ['dog', 9, 12],
    ['sleeps', 13, 19],
    ['.', 19, 20],
  ]),
);
const pair = { pairId: 1, text: TEXT, a, b, alignment: { ok: true }, sameTokens: false, colorScale: 'diverging' } as unknown as CompareInit;
const probs = (n: number) => Float32Array.from({ length: n * n }, (_, k) => ((k % n) + 1) / ((n * (n + 1)) / 2));

test('Compare Models exports both sides side by side, each with its own words, range and bar', () => {
  assert.deepEqual(compareFigureSpecs(pair, {}, 'light'), { error: 'side A has no picture yet; wait for it to draw' });
  const matrices = {
    a: { values: probs(8), n: 8, kind: 'probs' as const, layer: 1, head: 0 },
    b: { values: Float32Array.from(probs(7), (v) => v - 0.1), n: 7, kind: 'scores' as const, layer: 0, head: 1 },
  };
  const made = compareFigureSpecs(pair, matrices, 'dark');
  assert.ok(!('error' in made));
  const [sa, sb] = made.specs;
  assert.equal(sa!.rows, 8);
  assert.equal(sb!.rows, 7);
  assert.deepEqual(sa!.rowLabels, ['[CLS]', 'The', 'lazy', 'dog', 'sleeps.', '', '', '[SEP]'], 'whole words');
  assert.deepEqual(sb!.rowLabels, ['[CLS]', 'The', 'lazy', 'dog', 'sleeps.', '', '[SEP]'], 'B labelled with its own pieces');
  assert.equal(sa!.range.signed, false);
  assert.equal(sb!.range.signed, true, 'scores are signed: their own range');
  const R = layoutFigureRow(made.specs, made.title);
  assert.equal(R.xs[1], R.layouts[0]!.width, 'B starts where A ends');
  const svg = figureRowSvg(made.specs, made.title, 'dark');
  assertWellFormedXml(svg);
  assert.match(svg, />default vs bert-twin on the same text \(each side on its own scale\)<\/text>/);
  assert.match(svg, /A: default · probs · L1 H0/);
  assert.match(svg, /B: bert-twin · scores · L0 H1/);
  assert.equal((svg.match(/fill="none" stroke=/g) ?? []).length, 2, 'two framed maps');
  assert.equal((svg.match(/<g transform="translate\([\d.]+,[\d.]+\)">/g) ?? []).length, 2, 'each side placed once');
  assert.equal(compareFigureName(pair, matrices, 'svg'), 'compare-default-probs-L1H0-vs-bert-twin-scores-L0H1.svg');
});

test('the host accepts an export message only with a plain file name and the image of its format', () => {
  const ok = { type: 'export', format: 'svg', name: 'compare-a-vs-b.svg', svg: '<svg/>' };
  assert.deepEqual(parseCompareMessage(ok), ok);
  assert.deepEqual(parseCompareMessage({ type: 'export', format: 'png', name: 'x.png', dataUrl: 'data:image/png;base64,AA==' }), {
    type: 'export',
    format: 'png',
    name: 'x.png',
    dataUrl: 'data:image/png;base64,AA==',
  });
  for (const bad of [
    { ...ok, name: '../../etc/passwd' },
    { ...ok, name: '' },
    { ...ok, format: 'pdf' },
    { ...ok, svg: undefined },
    { type: 'export', format: 'png', name: 'x.png', svg: '<svg/>' },
  ])
    assert.equal(parseCompareMessage(bad), undefined, JSON.stringify(bad));
});
