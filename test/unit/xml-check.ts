// A strict XML 1.0 well-formedness check for the documents the exports write (no XML parser is a dependency).
import * as assert from 'node:assert/strict';

/** A strict check of XML 1.0 well-formedness for what the SVG writer emits: every character a Char, every
 *  reference to a Char, tags balanced, attributes quoted. Enough for a flat document without DTD or CDATA. */
export function assertWellFormedXml(xml: string): void {
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
