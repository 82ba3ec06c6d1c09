// The Compare panel's Difference view: what it subtracts (cells, or aligned spans) and the one line it shows
// instead when there is nothing meaningful to subtract.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProtocolToken } from '../../src/shared/protocol/lens';
import { alignTokens } from '../../src/shared/token-alignment';
import { difference, type DiffSide } from '../../webview/compare/difference';

const tok = (i: number, text: string, start: number, end: number, special = false): ProtocolToken => ({ i, text, start, end, special });
const side = (values: number[], kind: DiffSide['kind'] = 'probs'): DiffSide => ({
  values: Float32Array.from(values),
  n: Math.sqrt(values.length),
  kind,
  layer: 0,
  head: 1,
});
const text = 'ab c';
const A = [tok(0, '[CLS]', 0, 0, true), tok(1, '▁ab', 0, 2), tok(2, '▁c', 2, 4)];
const B = [tok(0, '[CLS]', 0, 0, true), tok(1, 'a', 0, 1), tok(2, '##b', 1, 2), tok(3, 'c', 3, 4)];

test('same tokens: A − B cell by cell; identical sides say so', () => {
  const d = difference(side([1, 0, 0, 1]), side([0.5, 0.5, 0, 1]), {
    sameTokens: true,
    alignment: alignTokens('x', [], []),
    tokensA: [tok(0, 'x', 0, 1), tok(1, 'y', 1, 1)],
  });
  assert.ok(d.ok);
  assert.deepEqual(Array.from(d.values), [0.5, -0.5, 0, 0]);
  assert.equal(d.pooled, false);
  assert.deepEqual(d.labels, ['x', 'y']);
  const same = difference(side([1, 0, 0, 1]), side([1, 0, 0, 1]), { sameTokens: true, alignment: alignTokens('x', [], []), tokensA: [] });
  assert.ok(same.ok && same.caption.endsWith('A and B are identical here: every cell is 0.'));
});

test('different tokenizers: means over the aligned spans, then A − B', () => {
  const alignment = alignTokens(text, A, B);
  assert.ok(alignment.ok);
  // A is 3 × 3, B is 4 × 4: spans [CLS], "ab", "c".
  const a = side([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const b = side([0, 0, 0, 0, 0, 1, 3, 0, 0, 2, 4, 0, 0, 0, 0, 8]);
  const d = difference(a, b, { sameTokens: false, alignment, tokensA: A });
  assert.ok(d.ok);
  assert.equal(d.pooled, true);
  assert.deepEqual(d.labels, ['[CLS]', 'ab', 'c']);
  // Cell ("ab", "ab"): A 5, B mean(1, 3, 2, 4) = 2.5; cell ("c", "c"): 9 − 8.
  assert.equal(d.values[4], 2.5);
  assert.equal(d.values[8], 1);
  assert.match(
    d.caption,
    /over 3 aligned spans: the tokenizers split the text differently, so each cell is the mean over the span's tokens on each side, then A − B\.$/,
  );
});

test('nothing to subtract: different terms, or tokens that cannot be aligned, each in one line', () => {
  const alignment = alignTokens(text, A, B);
  const d = difference(side([1]), side([1], 'scores'), { sameTokens: false, alignment, tokensA: A });
  assert.deepEqual(d, { ok: false, message: 'A shows probs and B shows scores: pick the same term on both sides to see A − B.' });
  const bad = alignTokens(text, A, [tok(0, 'zz', 2, 9)], { a: 'deberta-v3-base', b: 'bert-base-uncased' });
  const e = difference(side([1]), side([1]), { sameTokens: false, alignment: bad, tokensA: A });
  assert.ok(!e.ok);
  assert.equal(
    e.message,
    'No difference: the tokens differ and cannot align the two tokenizations: bert-base-uncased\'s token 0 "zz" has character offsets 2–9 outside the text (4 characters).',
  );
  assert.equal(difference(undefined, side([1]), { sameTokens: false, alignment, tokensA: A }).ok, false);
});
