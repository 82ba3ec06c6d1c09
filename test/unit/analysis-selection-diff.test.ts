import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffMatched, diffResults, matchTokens } from '../../src/analysis/selection-diff';
import { ExplainResult } from '../../src/engine/result/explain-result';
import { isLensError } from '../../src/engine/errors';
import { at } from './helpers';
import { fixtureResult } from './analysis-fixture';

const toks = (s: string) => s.split(' ').map((text) => ({ text }));

test('LCS over piece texts: matched pairs, deletions, insertions', async () => {
  const m = matchTokens(toks('A B C D'), toks('A X C D E'));
  assert.deepEqual(m.pairs, [
    [0, 0],
    [2, 2],
    [3, 3],
  ]);
  assert.deepEqual(m.onlyA, [1]);
  assert.deepEqual(m.onlyB, [1, 4]);
});

test('repeated pieces match in order; ties pair A tokens as early as possible', async () => {
  assert.deepEqual(matchTokens(toks('x y'), toks('y x')).pairs, [[0, 1]]);
  assert.deepEqual(matchTokens(toks('the cat the'), toks('the the')).pairs, [
    [0, 0],
    [2, 1],
  ]);
  assert.deepEqual(matchTokens([], toks('a')).onlyB, [0]);
});

test('differences over matched pairs', async () => {
  const a = Float32Array.from([1, 2, 3, 4]); // n = 2
  const b = Float32Array.from([10, 20, 30, 40, 50, 60, 70, 80, 90]); // n = 3
  // pairs (0↔0), (1↔2): diff[p,q] = b[bp,bq] − a[ap,aq] = [[10−1, 30−2], [70−3, 90−4]]
  assert.deepEqual(
    Array.from(
      diffMatched(a, 2, b, 3, [
        [0, 0],
        [1, 2],
      ]),
    ),
    [9, 28, 67, 86],
  );
  assert.throws(() => diffMatched(a, 3, b, 3, []), isLensError);
});

test('fixture: before/after an edit', async () => {
  const a = fixtureResult('text0');
  const self = await diffResults(a, a, 1, 'probs');
  assert.equal(self.pairs.length, a.n);
  assert.ok(self.diff.every((v) => v === 0));
  // "after": drop the first word's pieces (tokens 1, 2) from a copy of the result
  const keep = Array.from({ length: a.n }, (_, i) => i).filter((i) => i !== 1 && i !== 2);
  const m = keep.length;
  const sub = (t: Float32Array) => {
    const out = new Float32Array(a.heads * m * m);
    for (let h = 0; h < a.heads; h++)
      keep.forEach((i, p) => keep.forEach((j, q) => (out[(h * m + p) * m + q] = at(t, (h * a.n + i) * a.n + j) * 2)));
    return out;
  };
  const b = new ExplainResult(
    a.model,
    keep.map((i) => at(a.inputIds, i)),
    keep.map((i) => at(a.tokens, i)),
    a.scale,
    a.layers.map((layer) => ({ layer, c2c: sub(a.tensor(layer, 'c2c')), probs: sub(a.tensor(layer, 'probs')) })),
  );
  const d = await diffResults(a, b, 0, 'c2c');
  assert.deepEqual(d.onlyA, [1, 2]);
  assert.equal(d.pairs.length, m);
  // every matched value doubled: diff = a's value
  assert.equal(d.diff[(2 * m + 3) * m + 4], a.value(0, 2, 'c2c', at(keep, 3), at(keep, 4)));
  const other = new ExplainResult({ ...a.model, heads: 2 }, b.inputIds, b.tokens, b.scale, []);
  await assert.rejects(async () => diffResults(a, other, 0, 'c2c'), isLensError);
});
