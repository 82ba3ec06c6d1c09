// Issue 26's fuzz finding on exports: token labels may hold NUL, other C0 controls, U+FFFE or lone surrogates
// (the bundled model has such pieces); the SVG must stay well-formed XML, the HTML report free of them, and a
// CSV cell must not be run as a formula.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvCell, markupText } from '../../src/shared/markup-text';
import { rankingCsv } from '../../src/shared/interventions';
import { makeLut } from '../../webview/common/colors';
import { figureSvg } from '../../webview/common/figure';
import { assertWellFormedXml } from './xml-check';

const HOSTILE = ['\u0000', 'a\u0001b', '\ufffe', '\uffff', '\ud800', 'x\udc00', '<&>"\'', '\t\n', '▁the', '😀'];

test('hardening: the SVG export is well-formed XML when labels hold NUL, U+FFFE, C0 controls or lone surrogates', () => {
  const n = HOSTILE.length;
  const values = Float32Array.from({ length: n * n }, (_, k) => k / (n * n));
  const svg = figureSvg({
    values,
    rows: n,
    cols: n,
    range: { min: 0, max: 1, signed: false },
    lut: makeLut('diverging', false),
    title: 'layer 0 \u0000 head 1 \ufffe',
    rowLabels: HOSTILE,
    colLabels: HOSTILE,
    widthCm: 12,
    dpi: 300,
    theme: 'light',
  });
  assertWellFormedXml(svg);
  assert.ok(svg.includes('␀'), 'NUL is shown as its control picture');
  assert.ok(svg.includes('a␁b'));
  assert.ok(svg.includes('😀'), 'a surrogate pair is kept');
  assert.ok(svg.includes('&#60;&#38;&#62;&#34;&#39;'));
});

test('hardening: markupText leaves no character XML forbids; csvCell defuses formulas', () => {
  for (const s of HOSTILE) assertWellFormedXml(`<t a="${markupText(s)}">${markupText(s)}</t>`);
  assert.equal(csvCell('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
  assert.equal(csvCell('+1'), '"\'+1"');
  assert.equal(csvCell('@SUM(A1)'), '"\'@SUM(A1)"');
  assert.equal(csvCell('the'), '"the"');
  const csv = rankingCsv({
    ranking: [{ layer: 0, head: 1, term: 'c2p', drop: 0.5, logprobAfter: -1, rankAfter: 2, top1After: '=cmd|" /C calc"!A0' }],
  } as unknown as Parameters<typeof rankingCsv>[0]);
  assert.match(csv, /,"'=cmd\|"" \/C calc""!A0"\n$/);
});
