// Character-offset alignment of two tokenizations, on the real tokenizers the compare panel puts side by side:
// the bundled DeBERTa model's SentencePiece (models/default) and the BERT fixture's WordPiece (lower-cased,
// accents stripped, [UNK] for characters outside its vocabulary).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { buildModelInput, loadTokenizer } from '../../src/engine/tokenizer';
import type { Token } from '../../src/engine/types';
import {
  alignTokens,
  poolToGroups,
  sameTokenization,
  subtract,
  topKeys,
  type AlignedGroup,
  type AlignToken,
} from '../../src/shared/token-alignment';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const DEBERTA = path.join(REPO_ROOT, 'models', 'default');
const BERT = path.join(FIXTURES, 'bert', 'bert_tiny');

async function tokens(dir: string, text: string): Promise<Token[]> {
  return buildModelInput(await loadTokenizer(dir), text).tokens;
}

/** Each group as "text: A pieces | B pieces" (specials by their piece). */
function render(groups: AlignedGroup[], a: Token[], b: Token[]): string[] {
  return groups.map((g) => `${g.text}: ${g.a.map((i) => at(a, i).text).join(' ')} | ${g.b.map((i) => at(b, i).text).join(' ')}`);
}

/** Every token of both sides sits in exactly one group, groups follow the text. */
function assertPartition(groups: AlignedGroup[], a: Token[], b: Token[], groupOfA: number[], groupOfB: number[]): void {
  for (const [side, toks, of] of [
    ['a', a, groupOfA],
    ['b', b, groupOfB],
  ] as const) {
    const seen = groups.flatMap((g) => g[side]).sort((x, y) => x - y);
    assert.deepEqual(
      seen,
      toks.map((_, i) => i),
      `side ${side}: every token once`,
    );
    toks.forEach((_, i) => assert.ok(at(groups, at(of, i))[side].includes(i)));
  }
  const content = groups.filter((g) => !g.special);
  for (let k = 1; k < content.length; k++)
    assert.ok(at(content, k).start >= at(content, k - 1).end, 'content groups do not overlap and follow the text');
}

test('SentencePiece vs WordPiece on accented text, punctuation, [UNK] and whitespace runs', async () => {
  const text = "Café  naïve résumé, don't—stop! 😀 ☃ xyzzy   end.";
  const a = await tokens(DEBERTA, text);
  const b = await tokens(BERT, text);
  const r = alignTokens(text, a, b, { a: 'default', b: 'bert_tiny' });
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assertPartition(r.groups, a, b, r.groupOfA, r.groupOfB);
  // The smallest spans both sides cover with whole tokens (read off the pieces and offsets by hand).
  assert.deepEqual(render(r.groups, a, b), [
    '[CLS]: [CLS] | [CLS]',
    'Café: ▁Ca f é | cafe',
    // SentencePiece's "▁na" also covers the two spaces before it; WordPiece's "na" only the letters.
    'na: ▁na | na',
    'ïve: ï ve | ##ive',
    'r: ▁r | r',
    'é: é | ##e',
    'sum: sum | ##s ##u ##m',
    'é: é | ##e',
    ',: , | ,',
    'don: ▁don | d ##o ##n',
    "': ' | '",
    't: t | t',
    // The em dash is [UNK] for the BERT fixture: still one character, aligned with DeBERTa's piece.
    '—: — | [UNK]',
    's: s | s',
    'top: top | ##t ##o ##p',
    '!: ! | !',
    // A lone "▁" (the space before the emoji) joins the group after it.
    '😀: ▁ 😀 | [UNK]',
    '☃: ▁ ☃ | [UNK]',
    'x: ▁x | x',
    'y: y | ##y',
    'zz: zz | ##z ##z',
    'y: y | ##y',
    'end: ▁end | e ##n ##d',
    '.: . | .',
    '[SEP]: [SEP] | [SEP]',
  ]);
  assert.equal(r.oneSided, 0);
  const em = r.groups.find((g) => g.text === '—')!;
  assert.deepEqual([em.start, em.end], [25, 26]);
});

test('byte-level BPE (DeBERTa v1) vs WordPiece: the bytes of one character share its offsets and align as one', async () => {
  const text = 'Café  naïve 😀 end.';
  const a = await tokens(path.join(FIXTURES, 'deberta', 'v1_tiny'), text);
  const b = await tokens(BERT, text);
  const r = alignTokens(text, a, b);
  assert.ok(r.ok);
  assertPartition(r.groups, a, b, r.groupOfA, r.groupOfB);
  assert.deepEqual(render(r.groups, a, b), [
    '[CLS]: [CLS] | [CLS]',
    // "é" is two bytes, two byte-level pieces, one character.
    'Café: C a f Ã © | cafe',
    // Two spaces, two "Ġ" pieces: they join the span after them.
    'na: Ġ Ġ n a | na',
    'ïve: Ã ¯ v e | ##ive',
    '😀: Ġ ð Ł ĺ Ģ | [UNK]',
    'e: Ġ e | e',
    'n: n | ##n',
    'd: d | ##d',
    '.: . | .',
    '[SEP]: [SEP] | [SEP]',
  ]);
});

test('the same tokenizer on both sides aligns token for token', async () => {
  const text = 'The quick brown fox jumps over the lazy dog.';
  const a = await tokens(DEBERTA, text);
  const r = alignTokens(text, a, a);
  assert.ok(r.ok);
  assert.equal(r.groups.length, a.length);
  r.groups.forEach((g, k) => assert.deepEqual([g.a, g.b], [[k], [k]]));
  assert.ok(sameTokenization(a, a));
  assert.ok(!sameTokenization(a, await tokens(BERT, text)));
});

test('line breaks and tabs between words belong to no group; a character only one side covers is a one-sided group', () => {
  const text = 'ab\n\t cd\u200bef';
  const a: AlignToken[] = [
    { start: 0, end: 0, special: true, text: '[CLS]' },
    { start: 0, end: 2, special: false, text: '▁ab' },
    { start: 2, end: 7, special: false, text: '▁cd' },
    { start: 7, end: 8, special: false, text: '\u200b' },
    { start: 8, end: 10, special: false, text: 'ef' },
    { start: 10, end: 10, special: true, text: '[SEP]' },
  ];
  // WordPiece drops the zero-width space (a format character): no token covers it.
  const b: AlignToken[] = [
    { start: 0, end: 0, special: true, text: '[CLS]' },
    { start: 0, end: 2, special: false, text: 'ab' },
    { start: 5, end: 7, special: false, text: 'cd' },
    { start: 8, end: 10, special: false, text: 'ef' },
    { start: 10, end: 10, special: true, text: '[SEP]' },
  ];
  const r = alignTokens(text, a, b);
  assert.ok(r.ok);
  assert.deepEqual(
    r.groups.map((g) => [g.text, g.a, g.b]),
    [
      ['[CLS]', [0], [0]],
      ['ab', [1], [1]],
      ['cd', [2], [2]],
      ['\u200b', [3], []],
      ['ef', [4], [3]],
      ['[SEP]', [5], [4]],
    ],
  );
  assert.equal(r.oneSided, 1);
});

test('tokenizations that cannot be aligned: one line naming the side', () => {
  const text = 'hello world';
  const a: AlignToken[] = [{ start: 0, end: 11, special: false, text: '▁hello' }];
  const outside: AlignToken[] = [{ start: 6, end: 40, special: false, text: 'world' }];
  const r1 = alignTokens(text, a, outside, { a: 'deberta-v3-base', b: 'bert-base-uncased' });
  assert.ok(!r1.ok);
  assert.equal(
    r1.reason,
    'Cannot align the two tokenizations: bert-base-uncased\'s token 0 "world" has character offsets 6–40 outside the text (11 characters).',
  );
  assert.ok(!r1.reason.includes('\n'));
  // Side B covers only "hello" of "hello world" with tokens that cover the rest on side A alone.
  const r2 = alignTokens('hello wonderful world', [{ start: 0, end: 21, special: false }], [{ start: 0, end: 5, special: false }], {
    a: 'A',
    b: 'B',
  });
  assert.ok(r2.ok, 'one A token over the whole text still overlaps B');
  const r3 = alignTokens(
    'hello wonderful world',
    [
      { start: 0, end: 5, special: false },
      { start: 6, end: 15, special: false },
      { start: 16, end: 21, special: false },
    ],
    [{ start: 0, end: 5, special: false }],
    { a: 'A', b: 'B' },
  );
  assert.ok(!r3.ok);
  assert.equal(r3.reason, "Cannot align A's and B's tokens on this text: 74% of its characters are covered by one tokenizer only.");
});

test("pooling onto aligned groups: the mean over both groups' tokens, NaN where a side has no token", () => {
  const groups: AlignedGroup[] = [
    { a: [0], b: [0], start: 0, end: 0, text: '[CLS]', special: true },
    { a: [1, 2], b: [1], start: 0, end: 3, text: 'abc', special: false },
    { a: [3], b: [], start: 4, end: 5, text: 'd', special: false },
  ];
  // 4 × 4, row-major: value = 10·i + j.
  const m = Float32Array.from({ length: 16 }, (_, k) => 10 * Math.floor(k / 4) + (k % 4));
  const pooled = poolToGroups(m, 4, groups, 'a');
  assert.deepEqual(Array.from(pooled), [0, 1.5, 3, 15, 16.5, 18, 30, 31.5, 33]);
  const b2 = Float32Array.from([1, 2, 3, 4]);
  const pb = poolToGroups(b2, 2, groups, 'b');
  assert.deepEqual(
    Array.from(pb).map((v) => (Number.isNaN(v) ? 'NaN' : v)),
    [1, 2, 'NaN', 3, 4, 'NaN', 'NaN', 'NaN', 'NaN'],
  );
  const d = subtract(pooled, pb);
  assert.equal(d[0], -1);
  assert.equal(d[4], 12.5);
  assert.ok(Number.isNaN(d[2]));
  assert.throws(() => subtract(pooled, b2), /9 and 4 cells/);
});

test('topKeys: the strongest keys of the mean of the query rows', () => {
  const m = Float32Array.from([1, 6, 2, 5, 0, 4, 3, 3, 4]);
  assert.deepEqual(
    topKeys(m, 3, [0], 2).map((x) => x.j),
    [1, 2],
  );
  assert.deepEqual(
    topKeys(Float32Array.from([-8, 1, 2, 0]), 2, [0], 1).map((x) => x.j),
    [0],
    'by magnitude: a large negative score is a strong key too',
  );
  assert.deepEqual(topKeys(m, 3, [], 2), []);
  assert.equal(at(topKeys(m, 3, [2], 3), 0).weight, 1);
});
