import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregate, discountSpecialColumns, reduceHeads, spanRows, tokensInRange } from '../../src/analysis/aggregate';
import { groupWords, poolGroups } from '../../src/analysis/words';
import { isLensError } from '../../src/engine/errors';
import type { Token } from '../../src/engine/types';
import { at } from './helpers';
import { fixtureResult } from './analysis-fixture';

const close = (a: ArrayLike<number>, b: number[], eps = 1e-6) => {
  assert.equal(a.length, b.length);
  for (let k = 0; k < b.length; k++) {
    const [x, y] = [at(a, k), at(b, k)];
    assert.ok(Math.abs(x - y) <= eps, `[${k}] ${x} vs ${y}`);
  }
};

test('mean and max over heads', async () => {
  const t = Float32Array.from([1, -2, 3, 4, 3, 0, -1, 8]); // two heads, n = 2
  close(reduceHeads(t, 2, 'mean'), [2, -1, 1, 6]);
  close(reduceHeads(t, 2, 'max'), [3, 0, 3, 8]);
});

test('aggregate over layers and heads of the fixture equals a direct loop', async () => {
  const r = fixtureResult('short5');
  const mean = await aggregate(r, 'probs', 'mean');
  const max = await aggregate(r, 'c2p', 'max', { layers: [1], heads: [0, 3] });
  for (let k = 0; k < 25; k++) {
    let s = 0;
    for (const l of [0, 1]) for (let h = 0; h < 4; h++) s += at(r.slice(l, h, 'probs'), k);
    assert.ok(Math.abs(at(mean, k) - s / 8) < 1e-6);
    assert.equal(max[k], Math.max(at(r.slice(1, 0, 'c2p'), k), at(r.slice(1, 3, 'c2p'), k)));
  }
  await assert.rejects(async () => aggregate(r, 'probs', 'mean', { layers: [5] }), isLensError);
  await assert.rejects(async () => aggregate(r, 'probs', 'mean', { heads: [4] }), isLensError);
});

test('span rows: sum and mean of selected query rows', async () => {
  const m = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  close(spanRows(m, 3, [0, 2], 'sum'), [8, 10, 12]);
  close(spanRows(m, 3, [0, 2], 'mean'), [4, 5, 6]);
  assert.throws(() => spanRows(m, 3, [], 'sum'), isLensError);
  assert.throws(() => spanRows(m, 3, [3], 'sum'), isLensError);
});

test('tokens under a source selection', async () => {
  const toks = [
    { start: 0, end: 0, special: true },
    { start: 0, end: 3, special: false },
    { start: 3, end: 4, special: false },
    { start: 4, end: 9, special: false },
    { start: 9, end: 9, special: true },
  ];
  assert.deepEqual(tokensInRange(toks, 2, 5), [1, 2, 3]);
  assert.deepEqual(tokensInRange(toks, 3, 3), [2]); // caret: the token containing it
});

test('discounting specials zeroes their columns and renormalises rows', async () => {
  const p = Float32Array.from([0.5, 0.3, 0.2, 1, 0, 0]);
  // row 0: [0, .3, .2] / .5 = [0, .6, .4]; row 1 has all mass on the special: stays zero, no NaN
  close(discountSpecialColumns(p, 3, [true, false, false]), [0, 0.6, 0.4, 0, 0, 0]);
  assert.throws(() => discountSpecialColumns(p, 3, [true]), isLensError);
});

test('spm pieces of the fixture merge into words', async () => {
  const r = fixtureResult('text0');
  const words = groupWords(r.tokens, r.text, 'words');
  assert.deepEqual(
    words.map((w) => w.text),
    ['[CLS]', 'the', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog', '[SEP]'],
  );
  const quick = at(words, 2);
  assert.deepEqual([quick.start, quick.end], [4, 9]); // the leading "▁" piece's space is not part of the word
  assert.equal(r.text!.slice(quick.start, quick.end), 'quick');
  // pooled probs rows still sum to 1
  const pooled = poolGroups(r.tensor(0, 'probs'), r.n, words);
  const W = words.length;
  for (let row = 0; row < r.heads * W; row++) {
    let s = 0;
    for (let b = 0; b < W; b++) s += at(pooled, row * W + b);
    assert.ok(Math.abs(s - 1) < 1e-5);
  }
});

// GPT-2 style pieces with offsets that include the leading space, as HF reports them.
const code = 'let getUser_name = fooBar(x);';
const piece = (text: string, start: number, end: number): Token => ({ id: 0, text, start, end, special: false });
const codeTokens = [
  piece('let', 0, 3),
  piece('Ġget', 3, 7),
  piece('User', 7, 11),
  piece('_', 11, 12),
  piece('name', 12, 16),
  piece('Ġ=', 16, 18),
  piece('Ġfoo', 18, 22),
  piece('Bar', 22, 25),
  piece('(', 25, 26),
  piece('x', 26, 27),
  piece(');', 27, 29),
];

test('identifiers mode keeps camelCase and snake_case whole', async () => {
  const g = groupWords(codeTokens, code, 'identifiers');
  assert.deepEqual(
    g.map((w) => w.text),
    ['let', 'getUser_name', '=', 'fooBar', '(', 'x', ');'],
  );
  const word = at(g, 1);
  assert.deepEqual(word.pieces, [1, 2, 3, 4]);
  assert.equal(code.slice(word.start, word.end), 'getUser_name');
});

test('words mode splits camelCase humps and underscores', async () => {
  const g = groupWords(codeTokens, code, 'words');
  assert.deepEqual(
    g.map((w) => w.text),
    ['let', 'get', 'User', '_', 'name', '=', 'foo', 'Bar', '(', 'x', ');'],
  );
  // without source text the piece texts are used
  assert.deepEqual(
    groupWords(codeTokens, undefined, 'identifiers').map((w) => w.text),
    ['let', 'getUser_name', '=', 'fooBar', '(', 'x', ');'],
  );
  const acronym = [piece('HTTP', 0, 4), piece('Server', 4, 10)];
  assert.deepEqual(
    groupWords(acronym, 'HTTPServer', 'words').map((w) => w.text),
    ['HTTP', 'Server'],
  );
});

test('pooling: rows mean over pieces, columns sum over pieces', async () => {
  const p = Float32Array.from([0.2, 0.3, 0.5, 0.1, 0.6, 0.3, 0.4, 0.4, 0.2]);
  // groups {0}, {1,2}: row w0 = row 0 → [.2, .8]; row w1 = mean(rows 1, 2) → [.25, .75]
  close(poolGroups(p, 3, [{ pieces: [0] }, { pieces: [1, 2] }]), [0.2, 0.8, 0.25, 0.75]);
  // columns 'mean': [.2, .4], [.25, .375]
  close(poolGroups(p, 3, [{ pieces: [0] }, { pieces: [1, 2] }], { columns: 'mean' }), [0.2, 0.4, 0.25, 0.375]);
  assert.throws(() => poolGroups(p, 3, [{ pieces: [0, 1] }, { pieces: [1, 2] }]), isLensError);
});
