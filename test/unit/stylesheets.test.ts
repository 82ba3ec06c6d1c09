// The webviews' stylesheets close every block they open. An unclosed rule does not fail loudly: CSS nesting turns
// every later rule into a descendant of it, so whole views silently lose their layout (a merge once left one open).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from './helpers';

const MEDIA = path.join(REPO_ROOT, 'media');

/** Where each top-level block ends, or the line of the first block left open / closed twice. */
function unbalanced(css: string): string | undefined {
  const text = css
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (s) => ' '.repeat(s.length));
  const open: number[] = [];
  let line = 1;
  for (const ch of text) {
    if (ch === '\n') line++;
    else if (ch === '{') open.push(line);
    else if (ch === '}' && open.pop() === undefined) return `a "}" on line ${line} closes nothing`;
  }
  return open.length ? `the block opened on line ${open[0]} is never closed` : undefined;
}

test('every stylesheet in media/ closes each block it opens', () => {
  const sheets = fs.readdirSync(MEDIA).filter((f) => f.endsWith('.css'));
  assert.ok(sheets.length >= 2, `expected the panels' stylesheets in ${MEDIA}`);
  for (const f of sheets) assert.equal(unbalanced(fs.readFileSync(path.join(MEDIA, f), 'utf8')), undefined, f);
});

test('the check finds a rule left open before the next one', () => {
  assert.match(unbalanced('.a {\n  color: red;\n\n.b {\n  gap: 4px;\n}\n') ?? '', /line 1 is never closed/);
  assert.match(unbalanced('.a { }\n}\n') ?? '', /line 2 closes nothing/);
  assert.equal(unbalanced('.a { content: "{"; } /* { */'), undefined);
});
