// Host side of word merging and selection diff: await answerRequest('words' | 'diff') on real fixture
// results (HF-computed v3_tiny outputs), through the parse → answer → structured-clone path the panel uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregate, diffMatched, groupWords, matchTokens, poolGroups } from '../../src/analysis';
import type { ExplainResult } from '../../src/engine/result/explain-result';
import { answerRequest, type AnswerContext } from '../../src/extension/lens/request-dispatch';
import { fromBuffer, parseRequestBody, type DiffResponse, type RequestBody, type WordsResponse } from '../../src/shared/protocol/lens';
import { reconcileState } from '../../webview/lens/state/nav';
import { diffCaption, diffMismatch, DIFF_EMPTY } from '../../webview/lens/views/diff-model';
import { mergeCaption } from '../../webview/lens/views/view-captions';
import { fixtureResult } from './analysis-fixture';

const a = fixtureResult('text1'); // "hello world, this is a test of the tokenizer."
const b = fixtureResult('text0'); // "the quick brown fox jumps over the lazy dog"

async function ask<T>(result: ExplainResult, body: RequestBody, ctx: AnswerContext = {}): Promise<T> {
  const parsed = parseRequestBody(JSON.parse(JSON.stringify(body)));
  assert.ok(parsed, `request ${JSON.stringify(body)} parses`);
  return structuredClone(await answerRequest(result, parsed, ctx)) as T;
}

test('words: probs pooled onto word groups, rows mean and columns sum, so rows still sum to 1', async () => {
  const r = await ask<WordsResponse>(a, { type: 'words', layer: 1, head: 2, kind: 'probs', mode: 'words' });
  const groups = groupWords(a.tokens, a.text, 'words');
  assert.equal(r.n, groups.length);
  assert.ok(r.n < a.n, `${a.n} pieces merge into fewer words (${r.n})`);
  assert.deepEqual(
    r.groups.map((g) => g.pieces),
    groups.map((g) => g.pieces),
  );
  assert.deepEqual(
    r.groups.map((g) => g.text),
    groups.map((g) => g.text),
  );
  assert.equal(r.columns, 'sum');
  const got = fromBuffer(r.data, r.n * r.n);
  assert.deepEqual([...got], [...poolGroups(a.slice(1, 2, 'probs'), a.n, groups, { columns: 'sum' })]);
  for (let w = 0; w < r.n; w++) {
    let s = 0;
    for (let v = 0; v < r.n; v++) s += got[w * r.n + v] ?? NaN;
    assert.ok(Math.abs(s - 1) < 1e-4, `word row ${w} sums to ${s}`);
  }
  assert.ok(
    r.groups.some((g) => g.pieces.length > 1),
    'some word has several pieces',
  );
  assert.ok(r.groups[0]?.special && r.groups[r.n - 1]?.special, '[CLS] and [SEP] stay their own groups');
});

test('words: raw terms pool columns by mean; head mean/max pools the head aggregate', async () => {
  const groups = groupWords(a.tokens, a.text, 'identifiers');
  const c = await ask<WordsResponse>(a, { type: 'words', layer: 0, head: 0, kind: 'c2p', mode: 'identifiers' });
  assert.equal(c.columns, 'mean');
  assert.equal(c.mode, 'identifiers');
  assert.deepEqual([...fromBuffer(c.data, c.n * c.n)], [...poolGroups(a.slice(0, 0, 'c2p'), a.n, groups, { columns: 'mean' })]);
  const m = await ask<WordsResponse>(a, { type: 'words', layer: 1, head: 'mean', kind: 'probs', mode: 'identifiers' });
  assert.deepEqual(
    [...fromBuffer(m.data, m.n * m.n)],
    [...poolGroups(await aggregate(a, 'probs', 'mean', { layers: [1] }), a.n, groups, { columns: 'sum' })],
  );
  await assert.rejects(
    async () => answerRequest(a, { type: 'words', layer: 99, head: 0, kind: 'probs', mode: 'words' }),
    /layer 99 is not in this result/,
  );
});

test('diff: without a previous result the view is told so, not given zeros', async () => {
  const r = await ask<DiffResponse>(b, { type: 'diff', layer: 0, head: 0, kind: 'probs' });
  assert.equal(r.hasPrevious, false);
  assert.equal(r.pairs.length, 0);
  assert.match(DIFF_EMPTY, /Explain twice/);
});

test('diff: current − previous over LCS-matched tokens, labels are the matched pieces', async () => {
  const r = await ask<DiffResponse>(b, { type: 'diff', layer: 1, head: 3, kind: 'c2c' }, { previous: a });
  const match = matchTokens(a.tokens, b.tokens);
  assert.equal(r.hasPrevious, true);
  assert.deepEqual(r.pairs, match.pairs);
  assert.ok(r.pairs.length >= 3 && r.pairs.length < b.n, `some but not all tokens match (${r.pairs.length} of ${b.n})`);
  assert.deepEqual(
    r.labels,
    match.pairs.map(([, j]) => b.tokens[j]?.text),
  );
  assert.equal(r.nA, a.n);
  assert.equal(r.nB, b.n);
  const P = r.pairs.length;
  assert.deepEqual([...fromBuffer(r.data, P * P)], [...diffMatched(a.slice(1, 3, 'c2c'), a.n, b.slice(1, 3, 'c2c'), b.n, match.pairs)]);
  // Same text twice: every token matches and the difference is exactly zero.
  const same = await ask<DiffResponse>(b, { type: 'diff', layer: 0, head: 1, kind: 'probs' }, { previous: fixtureResult('text0') });
  assert.equal(same.pairs.length, b.n);
  assert.ok(fromBuffer(same.data, b.n * b.n).every((v) => v === 0));
});

test('diff and words requests are validated as untrusted input', async () => {
  assert.equal(parseRequestBody({ type: 'diff', layer: 0, head: 'mean', kind: 'probs' }), undefined);
  assert.equal(parseRequestBody({ type: 'diff', layer: 0, head: 0, kind: 'nope' }), undefined);
  assert.equal(parseRequestBody({ type: 'words', layer: '0', head: 0, kind: 'probs' }), undefined);
  assert.deepEqual(parseRequestBody({ type: 'words', layer: 0, head: 'max', kind: 'probs', mode: 'bogus' }), {
    type: 'words',
    layer: 0,
    head: 'max',
    kind: 'probs',
    mode: 'words',
  });
});

test('captions name the pooling rule and the match count; saved merge survives a reload', async () => {
  assert.match(
    mergeCaption('probs', 'words', 'sum', 9, 14),
    /14 pieces merged into 9 words: each row is the mean .* each column the sum .*rows still sum to 1/,
  );
  assert.match(mergeCaption('c2c', 'identifiers', 'mean', 3, 5), /into 3 identifiers.*column the mean/);
  assert.equal(
    diffCaption('probs', 2, 1, 12, 14, 13),
    'probs, layer 2, head 1: current − previous explain, 12 of 14 tokens matched (previous had 13).',
  );
  const defaults = { term: 'probs' as const, view: 'heatmap' as const, colorScale: 'diverging' as const };
  const base = {
    version: 1,
    view: 'diff' as const,
    term: 'probs' as const,
    layer: 0,
    head: 0,
    pinned: null,
    compare: [],
    colorScale: 'diverging' as const,
  };
  const s = reconcileState({ ...base, merge: 'identifiers' }, defaults, ['probs'], [0], 4, 10);
  assert.equal(s.merge, 'identifiers');
  assert.equal(s.view, 'diff');
  const junk = reconcileState({ ...base, merge: 'letters' as never }, defaults, ['probs'], [0], 4, 10);
  assert.equal('merge' in junk, false);
});

test('diff says when the two texts are not the same passage', () => {
  assert.equal(diffMismatch(12, 14, 13), undefined, 'an edit keeps most tokens');
  assert.match(diffMismatch(16, 90, 80) ?? '', /not the same passage: only 16 of 80 tokens \(20%\)/);
  assert.equal(diffMismatch(0, 0, 5), undefined);
});
