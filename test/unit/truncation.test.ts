// A text longer than the model reads is never cut silently: explain, predict and the CLI refuse it in one line that
// says where the cut would fall and what would be left out, and the error carries the same as `cut`.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputTooLongError, openModel, type InputCut, type OpenModel } from '../../src/engine';
import { findCut } from '../../src/engine/run/input-cut';
import type { Token } from '../../src/engine/types';
import { REPO_ROOT } from './helpers';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-truncation-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

const TEXT = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the green forest at night.';
const SHORT = 'A fox ran.';

/** The refusal, checked: a one-line 'too-long' InputTooLongError; returns its cut. */
async function refusal(p: Promise<unknown>, pattern: RegExp): Promise<InputCut> {
  let cut: InputCut | undefined;
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof InputTooLongError, `expected InputTooLongError, got ${String(e)}`);
    assert.equal(e.code, 'too-long');
    assert.ok(!e.message.includes('\n'), e.message);
    assert.match(e.message, pattern);
    cut = e.cut;
    return true;
  });
  return cut!;
}

describe('a text over maxTokens is refused with where the cut falls', () => {
  let model: OpenModel;
  const LIMIT = 12;
  before(async () => {
    model = await openModel('default', { cacheDir, maxTokens: LIMIT });
  });
  after(() => model.dispose());

  it('one text: the offset of the first token left out, and how many are left out', async () => {
    const full = await model.tokenizer!.modelInput(TEXT);
    const n = full.tokens.length;
    assert.ok(n > LIMIT, `${n} tokens`);
    const cut = await refusal(
      model.explain({ text: TEXT }),
      new RegExp(`the input is ${n} tokens, over the limit of ${LIMIT} \\(maxTokens\\)`),
    );
    // [CLS] and the first LIMIT − 2 tokens are kept, then [SEP]: the cut falls at token LIMIT − 1.
    const firstOut = full.tokens[LIMIT - 1]!;
    assert.deepEqual(cut, {
      limit: LIMIT,
      limited_by: 'maxTokens',
      tokens: n,
      part: 'text',
      at_char: firstOut.start,
      dropped_chars: [firstOut.start, TEXT.length],
      dropped_tokens: n - LIMIT,
    });
    // What the message tells the user to do works: the text up to the cut fits exactly.
    const kept = TEXT.slice(0, cut.at_char);
    const r = await model.explain({ text: kept });
    try {
      assert.equal(r.tokens.length, LIMIT);
    } finally {
      r.release();
    }
  });

  it('the message names the character, the words there and the characters left out', async () => {
    const full = await model.tokenizer!.modelInput(TEXT);
    const at = full.tokens[LIMIT - 1]!.start;
    const words = JSON.stringify(TEXT.slice(at, at + 30) + '…');
    await refusal(
      model.explain({ text: TEXT }),
      new RegExp(
        `the limit falls at character ${at} of ${TEXT.length} in the text, before ${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, ` +
          `and its ${full.tokens.length - LIMIT} tokens from there on \\(characters ${at}–${TEXT.length}\\) would be left out: ` +
          `select less text \\(up to character ${at}\\) or raise the limit`,
      ),
    );
  });

  it('a pair: a cut in the second text, and a cut in the first that leaves out the whole second', async () => {
    const inSecond = await refusal(model.explain({ text: SHORT, pair: TEXT }), /in the second text \(the pair\)/);
    const full = await model.tokenizer!.modelInput(SHORT, TEXT);
    assert.equal(inSecond.part, 'pair');
    assert.equal(inSecond.at_char, full.tokens[LIMIT - 1]!.start);
    assert.equal(inSecond.dropped_tokens, full.tokens.length - LIMIT);
    assert.equal(inSecond.pair_dropped_tokens, undefined);

    const inFirst = await refusal(model.explain({ text: TEXT, pair: SHORT }), /and all \d+ of the second text's would be left out/);
    const first = await model.tokenizer!.modelInput(TEXT, SHORT);
    const pairTokens = (await model.tokenizer!.encode(SHORT)).length;
    assert.equal(inFirst.part, 'text');
    assert.equal(inFirst.at_char, first.tokens[LIMIT - 1]!.start);
    assert.equal(inFirst.pair_dropped_tokens, pairTokens);
    // Text tokens left out of both: all of them but the LIMIT − 2 kept.
    assert.equal(inFirst.dropped_tokens + pairTokens, first.tokens.length - 3 - (LIMIT - 2));
  });

  it('predict, ablate and the head ranking refuse the same way; ids keep the count-only refusal', async () => {
    await refusal(model.predict({ text: TEXT }), /the limit falls at character/);
    await refusal(model.ablate({ text: TEXT, ablate: '0.0:c2p' }), /the limit falls at character/);
    await refusal(model.sweep({ text: TEXT, terms: ['c2p'] }), /the limit falls at character/);
    await assert.rejects(model.explain({ ids: Array.from({ length: LIMIT + 1 }, () => 5) }), /over the limit of 12 \(maxTokens\)/);
  });
});

describe('a sequence classifier and an absolute-position model', () => {
  it('predict on a pair classifier refuses a pair over the limit', async () => {
    const model = await openModel(path.join(REPO_ROOT, 'models', 'default-pairs'), { cacheDir, maxTokens: 10 });
    try {
      const cut = await refusal(model.predict({ text: SHORT, pair: TEXT }), /over the limit of 10/);
      assert.equal(cut.part, 'pair');
    } finally {
      await model.dispose();
    }
  });

  it('BERT: the position table is the limit when it is the tighter one', async () => {
    const model = await openModel('bert-twin', { cacheDir });
    try {
      const P = model.checkpoint.spec.maxPositionEmbeddings;
      const long = `${TEXT} `.repeat(Math.ceil((P * 8) / TEXT.length));
      const cut = await refusal(
        model.explain({ text: long }),
        new RegExp(`but this model has absolute positions for only ${P}, and is not cut: .*: select less text$`),
      );
      assert.equal(cut.limited_by, 'positions');
      assert.equal(cut.limit, P);
    } finally {
      await model.dispose();
    }
  });
});

describe('findCut', () => {
  const tok = (start: number, end: number, special = false): Token => ({ id: 5, text: 'x', start, end, special });
  // [CLS] a b [SEP] c d [SEP]: text "a b" (3 chars), pair "c d".
  const tokens = [tok(0, 0, true), tok(0, 1), tok(2, 3), tok(3, 3, true), tok(0, 1), tok(2, 3), tok(3, 3, true)];
  const types = [0, 0, 0, 0, 1, 1, 1];
  const lengths = { text: 3, pair: 3 };

  it('fits: nothing to say', () => {
    assert.equal(findCut(tokens, types, lengths, 7, 'maxTokens'), undefined);
  });
  it('a cut on the middle [SEP] falls at the start of the second text', () => {
    const cut = findCut(tokens, types, lengths, 4, 'maxTokens')!;
    assert.deepEqual([cut.part, cut.at_char, cut.dropped_tokens, cut.dropped_chars], ['pair', 0, 2, [0, 3]]);
  });
  it('a cut in the first text counts the second text apart', () => {
    const cut = findCut(tokens, types, lengths, 2, 'maxTokens')!;
    assert.deepEqual([cut.part, cut.at_char, cut.dropped_tokens, cut.pair_dropped_tokens], ['text', 0, 2, 2]);
  });
});

describe('the CLI', () => {
  it('prints the refusal as one line on stderr', () => {
    const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
    const env = { ...process.env, XDG_CACHE_HOME: path.join(cacheDir, 'xdg') };
    const r = spawnSync(process.execPath, [cli, 'explain', '--model', 'default', '--max-tokens', '12', '--text', TEXT], {
      encoding: 'utf8',
      env,
      timeout: 60_000,
    });
    assert.notEqual(r.status, 0);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      /^deberta-lens: the input is \d+ tokens, over the limit of 12 \(--max-tokens\), and is not cut: the limit falls at character \d+ of 102 in the text/,
    );
  });
});
