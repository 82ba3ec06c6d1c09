// Hostile tokenizer files: constructs that never finish (an empty Metaspace replacement, a backtracking Replace
// pattern) and ids that index nothing. Loading refuses what it can; encoding runs in a thread whose time budget
// ends the rest, naming the file and the construct, while the caller's thread stays free.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { inspectModel } from '../../src/engine/model/open-model';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { DEFAULT_BUDGET, ThreadedTokenizer } from '../../src/engine/tokenizer-thread/threaded-tokenizer';
import { FIXTURES } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-tokhostile-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function dirWith(files: Record<string, unknown>): string {
  const dir = path.join(tmp, `d${n++}`);
  fs.mkdirSync(dir);
  for (const [f, data] of Object.entries(files))
    fs.writeFileSync(path.join(dir, f), typeof data === 'string' || data instanceof Uint8Array ? data : JSON.stringify(data));
  return dir;
}

const VOCAB = [
  ['[PAD]', 0],
  ['[CLS]', 0],
  ['[SEP]', 0],
  ['[UNK]', 0],
  ['a', -1],
  ['b', -2],
  ['▁', -3],
  ['[MASK]', 0],
];
const unigram = (extra: object = {}) => ({ model: { type: 'Unigram', unk_id: 3, vocab: VOCAB }, added_tokens: [], ...extra });
const BACKTRACKING = { normalizer: { type: 'Replace', pattern: { Regex: '(a+)+$' }, content: 'x' } };
const SLOW_TEXT = `${'a'.repeat(40)}b`;

async function rejectsLine(p: Promise<unknown>, ...parts: (string | RegExp)[]): Promise<Error> {
  let caught: Error | undefined;
  try {
    await p;
  } catch (e) {
    caught = e as Error;
  }
  assert.ok(caught, 'expected an error');
  assert.equal(caught.name, 'LensError', caught.stack);
  assert.ok(!caught.message.includes('\n'), caught.message);
  for (const part of parts) {
    if (typeof part === 'string') assert.ok(caught.message.includes(part), `${JSON.stringify(part)} not in: ${caught.message}`);
    else assert.match(caught.message, part);
  }
  return caught;
}

test('an empty Metaspace replacement (which would split forever) is refused at load', async () => {
  const dir = dirWith({ 'tokenizer.json': unigram({ pre_tokenizer: { type: 'Metaspace', replacement: '', prepend_scheme: 'always' } }) });
  await rejectsLine(loadTokenizer(dir), 'tokenizer.json', 'Metaspace replacement "" must be exactly one character');
  const two = dirWith({ 'tokenizer.json': unigram({ pre_tokenizer: { type: 'Metaspace', replacement: 'ab' } }) });
  await rejectsLine(loadTokenizer(two), 'Metaspace replacement "ab"');
});

test('Sequences nested thousands deep are refused by depth, not by a stack overflow', async () => {
  const depth = 20_000;
  const nested = `${'{"type":"Sequence","normalizers":['.repeat(depth)}{"type":"Lowercase"}${']}'.repeat(depth)}`;
  const text = JSON.stringify(unigram({ normalizer: 'X' })).replace('"X"', nested);
  await rejectsLine(
    loadTokenizer(dirWith({ 'tokenizer.json': text })),
    'tokenizer.json',
    'normalizer Sequences are nested more than 32 deep',
  );
});

test('negative, fractional and enormous ids from any tokenizer file are refused', async () => {
  await rejectsLine(
    loadTokenizer(dirWith({ 'tokenizer.json': unigram({ added_tokens: [{ id: -1, content: '[X]' }] }) })),
    'tokenizer.json',
    'added token "[X]" has id -1',
  );
  await rejectsLine(loadTokenizer(dirWith({ 'tokenizer.json': unigram({ added_tokens: [{ id: 2.5, content: '[X]' }] }) })), 'has id 2.5');
  await rejectsLine(
    loadTokenizer(dirWith({ 'tokenizer.json': { model: { type: 'Unigram', unk_id: 99, vocab: VOCAB } } })),
    'unk_id 99 is past the end of the vocabulary (8 pieces)',
  );
  await rejectsLine(
    loadTokenizer(dirWith({ 'tokenizer.json': { model: { type: 'BPE', vocab: { a: 1e12, '[UNK]': 0 }, merges: [] } } })),
    'BPE piece "a" has id 1000000000000',
    'from 0 to 16777215',
  );
  const spm = fs.readFileSync(path.join(FIXTURES, 'tokenizer', 'spm.model'));
  await rejectsLine(loadTokenizer(dirWith({ 'spm.model': spm, 'added_tokens.json': { '[NEW]': -1 } })), 'added_tokens.json', 'has id -1');
  await rejectsLine(
    loadTokenizer(dirWith({ 'spm.model': spm, 'tokenizer_config.json': { added_tokens_decoder: { '-1': { content: '[NEW]' } } } })),
    'tokenizer_config.json',
    'added token "[NEW]" has id "-1"',
  );
  const v1 = path.join(FIXTURES, 'deberta', 'v1_tiny');
  await rejectsLine(
    loadTokenizer(
      dirWith({
        'vocab.json': { ...JSON.parse(fs.readFileSync(path.join(v1, 'vocab.json'), 'utf8')), x: -1 },
        'merges.txt': fs.readFileSync(path.join(v1, 'merges.txt'), 'utf8'),
      }),
    ),
    'vocab.json',
    'piece "x" has id -1',
  );
});

test("special ids outside the model's vocab_size are refused when the model is opened", async () => {
  const dir = path.join(tmp, 'small-vocab');
  fs.cpSync(path.join(FIXTURES, 'deberta', 'v3_tiny'), dir, { recursive: true });
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...cfg, vocab_size: 3 }));
  await rejectsLine(inspectModel(dir), /token has id \d+, outside the model's vocabulary of 3 \(config\.json vocab_size\)/);
});

test('the threaded tokenizer gives the same tokens as the tokenizer itself', async () => {
  const dir = path.join(FIXTURES, 'tokenizer');
  const direct = await loadTokenizer(dir);
  const threaded = await ThreadedTokenizer.open(dir);
  try {
    assert.equal(threaded.kind, 'spm');
    assert.deepEqual(threaded.special, direct.special);
    assert.equal(threaded.vocabSize, direct.vocabSize);
    const text = 'Disentangled attention, naïvely: 12 ½ cafés — ok?';
    assert.deepEqual(await threaded.encode(text), direct.encode(text));
    assert.deepEqual(await threaded.pieces([0, 5, 10 ** 7]), [direct.idToPiece(0), direct.idToPiece(5), undefined]);
  } finally {
    await threaded.dispose();
  }
  await rejectsLine(ThreadedTokenizer.open(path.join(tmp, 'missing')), 'Model folder not found');
});

test("a backtracking Replace pattern is stopped by the budget, named, and the caller's thread stays free", async () => {
  const dir = dirWith({ 'tokenizer.json': unigram(BACKTRACKING) });
  const tok = await ThreadedTokenizer.open(dir, { ...DEFAULT_BUDGET, encodeMs: () => 800 });
  try {
    assert.deepEqual(
      (await tok.encode('ab')).map((t) => t.text),
      ['a', 'b'],
    );
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const t0 = performance.now();
    await rejectsLine(
      tok.encode(SLOW_TEXT),
      path.join(dir, 'tokenizer.json'),
      'tokenizing 41 characters ran past its 800 ms budget',
      'in normalizer Replace /(a+)+$/',
    );
    clearInterval(timer);
    assert.ok(performance.now() - t0 < 5000);
    // The caller's event loop kept running while the pattern backtracked (10 ms ticks over ~800 ms).
    assert.ok(ticks >= 20, `only ${ticks} ticks: the caller's thread was blocked`);
    // The thread was replaced: the next request works.
    assert.ok((await tok.encode('b')).length > 0);
  } finally {
    await tok.dispose();
  }
});

test('cancelling a runaway tokenization ends it at once', async () => {
  const dir = dirWith({ 'tokenizer.json': unigram(BACKTRACKING) });
  const tok = await ThreadedTokenizer.open(dir);
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t0 = performance.now();
    const e = await rejectsLine(tok.encode(SLOW_TEXT, ac.signal));
    assert.equal((e as Error & { code: string }).code, 'cancelled');
    assert.ok(performance.now() - t0 < 2000);
  } finally {
    await tok.dispose();
  }
});
