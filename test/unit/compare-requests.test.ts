// The Compare Models panel's host path on real engines: the bundled DeBERTa model beside the BERT fixture on the
// same text. What the view is told (sides, terms, alignment) and the matrices it gets: BERT's layer-0 split and
// scores equal Hugging Face's numbers in the fixture; one-line errors for what a side does not have.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { openModel, type ExplainResult, type LensModel } from '../../src/engine';
import { answerCompareSlice, compareInit } from '../../src/extension/compare/requests';
import { kindsFor, parseCompareMessage } from '../../src/shared/protocol/compare';
import { FIXTURES, REPO_ROOT, at, field } from './helpers';

const DEBERTA = path.join(REPO_ROOT, 'models', 'default');
const BERT = path.join(FIXTURES, 'bert', 'bert_tiny');
interface Case {
  text: string;
  expected: { layers: Array<{ scores: number[][][] }>; layer0_decomposition: Record<string, number[][][]> };
}
const fixtureCase = (): Case => JSON.parse(fs.readFileSync(path.join(BERT, 'expected_outputs.json'), 'utf8')).cases[0];

let deberta: LensModel;
let bert: LensModel;
before(async () => {
  deberta = await openModel(DEBERTA, { executionProvider: 'cpu' });
  bert = await openModel(BERT, { executionProvider: 'cpu' });
});
after(async () => {
  await deberta?.dispose();
  await bert?.dispose();
});

function maxRelErr(got: Float32Array, want: number[][]): number {
  const flat = want.flat();
  const scale = Math.max(...flat.map(Math.abs));
  let worst = 0;
  flat.forEach((w, k) => (worst = Math.max(worst, Math.abs(at(got, k) - w) / Math.max(Math.abs(w), 1e-3 * scale))));
  return worst;
}

test('init: both sides, the terms each offers, and the alignment of SentencePiece with WordPiece', async () => {
  const text = 'Café owners didn’t expect 3 robots!';
  const a = await deberta.explain({ text });
  const b = await bert.explain({ text });
  try {
    const init = compareInit(7, text, { result: a, ms: 12 }, { result: b, ms: 5 }, 'diverging');
    assert.equal(init.pairId, 7);
    assert.equal(init.a.architecture, 'deberta');
    assert.equal(init.b.architecture, 'bert');
    assert.deepEqual(init.a.terms, ['c2c', 'c2p', 'p2c']);
    assert.deepEqual(init.b.terms, []);
    assert.equal(init.b.decomposition, true);
    assert.deepEqual(kindsFor(init.a, 2), ['c2c', 'c2p', 'p2c', 'scores', 'probs']);
    assert.deepEqual(kindsFor(init.b, 0), ['c2c', 'c2p', 'p2c', 'p2p', 'rest', 'scores', 'probs']);
    assert.deepEqual(kindsFor(init.b, 1), ['scores', 'probs']);
    assert.equal(init.sameTokens, false);
    assert.ok(init.alignment.ok, init.alignment.ok ? '' : init.alignment.reason);
    const texts = init.alignment.groups.map((g) => g.text);
    assert.deepEqual(texts.slice(0, 6), ['[CLS]', 'Café', 'owner', 's', 'didn', '’']);
    // The curly apostrophe is [UNK] for the BERT fixture's vocabulary: one character, aligned all the same.
    assert.equal(at(b.tokens, at(at(init.alignment.groups, 5).b, 0)).text, '[UNK]');
    assert.equal(texts[texts.length - 1], '[SEP]');
    // "3" and "!" are groups of their own on both sides.
    for (const t of ['3', '!']) {
      const g = init.alignment.groups.find((x) => x.text === t)!;
      assert.ok(g.a.length >= 1 && g.b.length === 1, t);
    }
    // The messages carry plain data only (postMessage clones them).
    assert.deepEqual(JSON.parse(JSON.stringify(init)).a.tokens.length, a.n);
  } finally {
    a.release();
    b.release();
  }
});

test("BERT side: layer 0 c2c/c2p/p2c/p2p/rest and scores equal Hugging Face's (fixture, ≤1e-4 rel); DeBERTa probs rows sum to 1", async () => {
  const c = fixtureCase();
  const b = await bert.explain({ text: c.text });
  const a = await deberta.explain({ text: c.text });
  try {
    for (const head of [0, b.heads - 1]) {
      for (const kind of ['c2c', 'c2p', 'p2c', 'p2p', 'rest'] as const) {
        const r = await answerCompareSlice(b, { layer: 0, head, kind });
        assert.equal(r.n, b.n);
        const err = maxRelErr(r.data, at(field(c.expected.layer0_decomposition, kind), head));
        assert.ok(err <= 1e-4, `head ${head} ${kind}: max rel error ${err}`);
      }
      const s = await answerCompareSlice(b, { layer: 1, head, kind: 'scores' });
      assert.ok(maxRelErr(s.data, at(at(c.expected.layers, 1).scores, head)) <= 1e-4, `head ${head} layer 1 scores`);
    }
    const p = await answerCompareSlice(a, { layer: 3, head: 5, kind: 'probs' });
    assert.equal(p.data.length, a.n * a.n);
    for (let i = 0; i < a.n; i++) {
      let sum = 0;
      for (let j = 0; j < a.n; j++) sum += at(p.data, i * a.n + j);
      assert.ok(Math.abs(sum - 1) < 1e-4, `row ${i} sums to ${sum}`);
    }
    const c2p = await answerCompareSlice(a, { layer: 0, head: 0, kind: 'c2p' });
    assert.deepEqual(c2p.data, a.slice(0, 0, 'c2p'));
  } finally {
    a.release();
    b.release();
  }
});

test('one-line errors for a term, layer or head a side does not have', async () => {
  const text = 'A short text.';
  const a: ExplainResult = await deberta.explain({ text });
  const b: ExplainResult = await bert.explain({ text });
  try {
    await assert.rejects(answerCompareSlice(b, { layer: 1, head: 0, kind: 'c2p' }), {
      message: "BERT's c2p is layer 0's split of the score: pick layer 0 to see it",
    });
    await assert.rejects(
      answerCompareSlice(a, { layer: 0, head: 0, kind: 'p2p' }),
      /has no p2p term \(it has c2c, c2p, p2c, scores, probs\)$/,
    );
    await assert.rejects(answerCompareSlice(a, { layer: 9, head: 0, kind: 'probs' }), {
      message: 'layer 9 is not in this result (it has 0, 1, 2, 3)',
    });
    await assert.rejects(answerCompareSlice(b, { layer: 0, head: 4, kind: 'probs' }), { message: 'head 4 is out of range (0–3)' });
  } finally {
    a.release();
    b.release();
  }
});

test('the same model on both sides: same tokens, aligned one to one', async () => {
  const text = 'The same tokenizer twice.';
  const a = await deberta.explain({ text });
  const b = await deberta.explain({ text });
  try {
    const init = compareInit(1, text, { result: a, ms: 0 }, { result: b, ms: 0 }, 'viridis');
    assert.equal(init.sameTokens, true);
    assert.ok(init.alignment.ok);
    assert.equal(init.alignment.groups.length, a.n);
  } finally {
    a.release();
    b.release();
  }
});

test('messages from the compare view are validated', () => {
  assert.deepEqual(parseCompareMessage({ type: 'request', id: 3, pairId: 1, side: 'b', body: { layer: 0, head: 1, kind: 'p2p' } }), {
    type: 'request',
    id: 3,
    pairId: 1,
    side: 'b',
    body: { layer: 0, head: 1, kind: 'p2p' },
  });
  assert.equal(
    parseCompareMessage({ type: 'request', id: 3, pairId: 1, side: 'c', body: { layer: 0, head: 1, kind: 'probs' } }),
    undefined,
  );
  assert.equal(parseCompareMessage({ type: 'request', id: 3, pairId: 1, side: 'a', body: { layer: 0, head: 1, kind: 'p2q' } }), undefined);
  assert.equal(
    parseCompareMessage({ type: 'request', id: 1.5, pairId: 1, side: 'a', body: { layer: 0, head: 1, kind: 'probs' } }),
    undefined,
  );
  assert.deepEqual(parseCompareMessage({ type: 'ready', version: 1 }), { type: 'ready', version: 1 });
  assert.equal(parseCompareMessage(null), undefined);
});
