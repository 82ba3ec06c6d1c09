// SentencePiece (spm.model) tokenizer against what the SentencePiece library itself returns.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { FIXTURES, at } from './helpers';

interface LibToken {
  id: number;
  piece: string;
  start: number;
  end: number;
  start_utf16?: number;
  end_utf16?: number;
}
interface LibCase {
  text: string;
  ids?: number[];
  tokens: LibToken[];
  input_ids?: number[];
}

const TOK_DIR = path.join(FIXTURES, 'tokenizer');
const readCases = (file: string): LibCase[] => JSON.parse(fs.readFileSync(file, 'utf8')).cases;

/** Code-point offsets → UTF-16 offsets of `text`. */
function cpToUtf16(text: string, cp: number): number {
  return Array.from(text).slice(0, cp).join('').length;
}

test('spm: all 170 library cases match exactly (ids, pieces, UTF-16 offsets)', async () => {
  const tok = await loadTokenizer(TOK_DIR);
  assert.equal(tok.kind, 'spm');
  const cases = readCases(path.join(TOK_DIR, 'expected_tokens.json'));
  assert.equal(cases.length, 170);
  let matched = 0;
  for (const c of cases) {
    const got = tok.encode(c.text);
    assert.deepEqual(
      got.map((t) => [t.id, t.text, t.start, t.end, t.special]),
      c.tokens.map((t) => [t.id, t.piece, t.start_utf16, t.end_utf16, false]),
      `text ${JSON.stringify(c.text.slice(0, 60))}`,
    );
    if (c.ids)
      assert.deepEqual(
        got.map((t) => t.id),
        c.ids,
      );
    // Offsets index the original text: non-empty, in order, within bounds.
    for (const t of got) assert.ok(0 <= t.start && t.start <= t.end && t.end <= c.text.length);
    matched++;
  }
  assert.equal(matched, 170);
});

test('spm: fixture model specials follow DeBERTa-v3 ([MASK] appended after the pieces)', async () => {
  const tok = await loadTokenizer(TOK_DIR);
  assert.deepEqual(tok.special, { pad: 0, cls: 1, sep: 2, unk: 3, mask: 8000 });
  assert.equal(tok.vocabSize, 8001);
  assert.equal(tok.idToPiece(8000), '[MASK]');
  assert.equal(tok.idToPiece(5), '▁the');
  assert.equal(tok.idToPiece(8001), undefined);
  assert.equal(tok.idToPiece(-1), undefined);
});

for (const name of ['v2_tiny', 'v3_tiny']) {
  test(`spm: ${name} checkpoint tokens and model input match the library`, async () => {
    const dir = path.join(FIXTURES, 'deberta', name);
    const tok = await loadTokenizer(dir);
    const cases = readCases(path.join(dir, 'expected_tokens.json'));
    assert.ok(cases.length >= 3);
    for (const c of cases) {
      const got = tok.encode(c.text);
      assert.deepEqual(
        got.map((t) => [t.id, t.text, t.start, t.end]),
        c.tokens.map((t) => [t.id, t.piece, cpToUtf16(c.text, t.start), cpToUtf16(c.text, t.end)]),
      );
      assert.deepEqual([tok.special.cls, ...got.map((t) => t.id), tok.special.sep], c.input_ids);
    }
  });
}

test('spm: hard cases keep offsets on the original text', async () => {
  const tok = await loadTokenizer(TOK_DIR);
  const surface = (text: string) => tok.encode(text).map((t) => text.slice(t.start, t.end));

  assert.deepEqual(tok.encode(''), []);
  assert.deepEqual(tok.encode(' \t\r\n  '), []);

  // Leading/trailing whitespace is dropped; a whitespace run collapses into the next piece's range.
  const ws = '  hello   world  ';
  const toks = tok.encode(ws);
  assert.equal(at(toks, 0).start, 2, 'the first piece starts at the first non-space');
  assert.equal(at(toks, toks.length - 1).end, 15, 'the last piece ends before the trailing spaces');
  assert.equal(surface(ws).join(''), 'hello   world');

  // CRLF and tabs are whitespace to the normalizer; the pieces still point at the words.
  const crlf = 'one\r\ntwo\tthree';
  assert.deepEqual(surface(crlf).join('|').replace(/[|]/g, ''), 'one\r\ntwo\tthree');

  // Astral characters (emoji) take two UTF-16 units; offsets must not split them.
  const emoji = 'a 😀 b';
  for (const t of tok.encode(emoji)) {
    const s = emoji.slice(t.start, t.end);
    assert.ok(!/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(s), `surrogate split in ${JSON.stringify(s)}`);
  }
  const unk = tok.encode('x 😀😀 y').find((t) => t.id === tok.special.unk);
  assert.ok(unk, 'emoji are unknown to this small model');
  assert.equal(unk.text, '😀😀', 'a run of unknown characters is one UNK piece');
  assert.deepEqual([unk.start, unk.end], [2, 6]);
});

test('spm: a lone surrogate is encoded as U+FFFD without breaking offsets', async () => {
  const tok = await loadTokenizer(TOK_DIR);
  const text = 'ab\uD800cd';
  const toks = tok.encode(text);
  assert.ok(toks.length > 0);
  assert.equal(at(toks, toks.length - 1).end, text.length);
});
