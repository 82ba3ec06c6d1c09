// Issue 26's fuzz finding on exports: token labels may hold NUL, other C0 controls, U+FFFE or lone surrogates
// (the bundled model has such pieces); the SVG must stay well-formed XML, the HTML report free of them, and a
// CSV cell must not be run as a formula.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvCell, markupText } from '../../src/shared/markup-text';
import { rankingCsv } from '../../src/shared/interventions';
import { makeLut } from '../../webview/common/colors';
import { heatmapSvg } from '../../webview/common/heatmap-svg';

/** A strict check of XML 1.0 well-formedness for what the SVG writer emits: every character a Char, every
 *  reference to a Char, tags balanced, attributes quoted. Enough for a flat document without DTD or CDATA. */
function assertWellFormedXml(xml: string): void {
  // eslint-disable-next-line no-control-regex -- the check is about control characters
  const bad = /[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u.exec(xml);
  assert.equal(bad, null, `character U+${bad?.[0].codePointAt(0)?.toString(16)} is not allowed in XML 1.0`);
  for (const m of xml.matchAll(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);|&/g)) {
    assert.ok(m[1] !== undefined, `a bare & at ${m.index}`);
    if (m[1].startsWith('#')) {
      const cp = m[1][1] === 'x' ? parseInt(m[1].slice(2), 16) : parseInt(m[1].slice(1), 10);
      const ok = cp === 9 || cp === 10 || cp === 13 || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || cp >= 0x10000;
      assert.ok(ok, `&${m[1]}; refers to a character XML 1.0 forbids`);
    } else assert.ok(['amp', 'lt', 'gt', 'quot', 'apos'].includes(m[1]), `unknown entity &${m[1]};`);
  }
  const open: string[] = [];
  for (const m of xml.matchAll(/<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|</g)) {
    assert.ok(m[2] !== undefined, `a stray < at ${m.index}`);
    if (m[1]) assert.equal(open.pop(), m[2], `</${m[2]}> closes the wrong element`);
    else if (!m[4]) open.push(m[2]);
  }
  assert.deepEqual(open, [], 'every element is closed');
}

const HOSTILE = ['\u0000', 'a\u0001b', '\ufffe', '\uffff', '\ud800', 'x\udc00', '<&>"\'', '\t\n', '▁the', '😀'];

test('hardening: the SVG export is well-formed XML when labels hold NUL, U+FFFE, C0 controls or lone surrogates', () => {
  const n = HOSTILE.length;
  const values = Float32Array.from({ length: n * n }, (_, k) => k / (n * n));
  const svg = heatmapSvg(values, n, n, { min: 0, max: 1, signed: false }, makeLut('diverging', false), {
    cell: 10,
    title: 'layer 0 \u0000 head 1 \ufffe',
    rowLabels: HOSTILE,
    colLabels: HOSTILE,
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
