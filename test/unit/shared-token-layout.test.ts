import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProtocolToken } from '../../src/shared/protocol/lens';
import { layoutTokens, pieceLabel, tokenAtOffset, visibleSpan, type Line } from '../../src/shared/token-layout';
import { at } from './helpers';

const tok = (i: number, text: string, start: number, end: number, special = false): ProtocolToken => ({ i, text, start, end, special });

/** The visible text of a layout, lines joined by \n (specials shown as their piece). */
function render(lines: Line[]): string {
  return lines.map((l) => l.map((s) => s.text).join('')).join('\n');
}

test('tokens and gaps reproduce the source text, line breaks kept', () => {
  const text = 'Hello  big\nworld\n\nend';
  const tokens = [
    tok(0, '[CLS]', 0, 0, true),
    tok(1, '▁Hello', 0, 5),
    tok(2, '▁big', 7, 10),
    tok(3, '▁world', 11, 16),
    tok(4, '▁end', 18, 21),
    tok(5, '[SEP]', 21, 21, true),
  ];
  const lines = layoutTokens(text, tokens);
  assert.equal(lines.length, 4);
  assert.equal(render(lines), '[CLS]Hello  big\nworld\n\nend[SEP]');
  assert.deepEqual(at(lines, 0)[0], { kind: 'token', i: 0, text: '[CLS]', special: true });
  assert.deepEqual(at(lines, 0)[2], { kind: 'gap', text: '  ' });
  assert.deepEqual(lines[2], [], 'an empty line stays an empty line');
  assert.deepEqual(at(lines, 3)[0], { kind: 'token', i: 4, text: 'end', special: false });
});

test('a leading space inside a token’s offsets is laid out as a gap (no highlight stub where a line wraps)', () => {
  const text = 'a b';
  const lines = layoutTokens(text, [tok(0, '▁a', 0, 1), tok(1, '▁b', 1, 3)]);
  assert.equal(render(lines), 'a b');
  assert.deepEqual(at(lines, 0)[1], { kind: 'gap', text: ' ' });
  assert.deepEqual(at(lines, 0)[2], { kind: 'token', i: 1, text: 'b', special: false });
});

test('tokens that share characters (byte fallback) still get a visible piece each', () => {
  const text = '😀';
  const lines = layoutTokens(text, [tok(0, '<0xF0>', 0, 2), tok(1, '<0x9F>', 0, 2), tok(2, '<0x98>', 0, 2)]);
  const toks = at(lines, 0).filter((s) => s.kind === 'token');
  assert.equal(toks.length, 3);
  assert.equal(at(toks, 0).text, '😀');
  assert.equal(at(toks, 1).text, '<0x9F>');
});

test('CRLF line breaks split lines once', () => {
  const lines = layoutTokens('a\r\nb', [tok(0, 'a', 0, 1), tok(1, 'b', 3, 4)]);
  assert.equal(lines.length, 2);
  assert.equal(render(lines), 'a\nb');
});

test('pieceLabel strips word-boundary markers; a lone marker shows as the ␣ space marker', () => {
  assert.equal(pieceLabel('▁the'), 'the');
  assert.equal(pieceLabel('Ġthe'), 'the');
  assert.equal(pieceLabel('▁'), '␣');
  assert.equal(pieceLabel('Ġ'), '␣');
});

test('tokenAtOffset maps an editor offset to the token under it, skipping specials that cover no text', () => {
  const tokens = [tok(0, '[CLS]', 0, 0, true), tok(1, 'ab', 0, 2), tok(2, 'cd', 3, 5), tok(3, '[SEP]', 5, 5, true)];
  assert.equal(tokenAtOffset(tokens, 0), 1);
  assert.equal(tokenAtOffset(tokens, 1), 1);
  assert.equal(tokenAtOffset(tokens, 2), 1, 'caret right after a token belongs to it');
  assert.equal(tokenAtOffset(tokens, 3), 2);
  assert.equal(tokenAtOffset(tokens, 5), 2);
  assert.equal(tokenAtOffset(tokens, 9), null);
  assert.equal(tokenAtOffset(tokens, -1), null);
});

test('a [MASK] written in the text shows once, where it was written, and the editor finds it', () => {
  // Offsets as the bundled tokenizer gives them for "the [MASK] and" (the [MASK] is special but covers its text).
  const text = 'the [MASK] and';
  const tokens = [
    tok(0, '[CLS]', 0, 0, true),
    tok(1, '▁the', 0, 3),
    tok(2, '[MASK]', 4, 10, true),
    tok(3, '▁and', 10, 14),
    tok(4, '[SEP]', 14, 14, true),
  ];
  const lines = layoutTokens(text, tokens);
  assert.equal(render(lines), '[CLS]the [MASK] and[SEP]');
  assert.deepEqual(at(lines, 0)[3], { kind: 'token', i: 2, text: '[MASK]', special: true });
  assert.equal(tokenAtOffset(tokens, 6), 2, 'the cursor inside [MASK]');
  assert.equal(tokenAtOffset(tokens, 12), 3);
});

test('a whitespace token that covers a line break (SPM ▁ on \\n) keeps the break', () => {
  // Offsets as the engine's spm tokenizer produces them for "Hello big\nworld" (v3_tiny fixture).
  const text = 'Hello\nworld';
  const tokens = [
    tok(0, '[CLS]', 0, 0, true),
    tok(1, '▁', 0, 0),
    tok(2, 'Hello', 0, 5),
    tok(3, '▁', 5, 6),
    tok(4, 'world', 6, 11),
    tok(5, '[SEP]', 11, 11, true),
  ];
  const lines = layoutTokens(text, tokens);
  assert.equal(lines.length, 2);
  assert.equal(render(lines), '[CLS]␣Hello↵\nworld[SEP]');
  assert.ok(
    at(lines, 0).some((s) => s.kind === 'token' && s.i === 3),
    'the break token is still hoverable',
  );
});

test('visibleSpan trims the spaces and line breaks of a token’s span; a whitespace-only span has nothing to show', () => {
  const text = 'Hawkins."\n▁"I said';
  assert.deepEqual(visibleSpan('a  word\n', 1, 8), { start: 3, end: 7 });
  assert.equal(visibleSpan(text, 9, 10), null, 'a lone ▁ on the line break');
  assert.deepEqual(visibleSpan(' x', 0, 2), { start: 1, end: 2 });
  assert.deepEqual(visibleSpan('abc', -3, 99), { start: 0, end: 3 }, 'clamped to the text');
});
