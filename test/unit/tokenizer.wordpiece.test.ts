// BERT's WordPiece tokenizer: vocab.txt + tokenizer_config.json against Hugging Face's own BertTokenizer (the
// bert_tiny fixture's three cases, and fixtures/wordpiece: 54 hard texts under 8 settings), and a tokenizer.json
// of the same vocabulary against @huggingface/tokenizers (an independent implementation of the fast tokenizer).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { buildModelInput, loadTokenizer, missingTokenizerError, type Tokenizer } from '../../src/engine/tokenizer';
import { FIXTURES, at } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-wordpiece-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const BERT_TINY = path.join(FIXTURES, 'bert', 'bert_tiny');
const WP = path.join(FIXTURES, 'wordpiece');

interface FixtureCase {
  name: string;
  text: string;
  text_pair?: string;
  tokens: string[];
  input_ids: number[];
  token_type_ids: number[];
  offsets: Array<[number, number] | null>;
}
interface WpCase {
  text: string;
  tokens: string[];
  ids: number[];
  offsets: Array<[number, number]>;
}
interface WpSetting {
  name: string;
  tokenizer_config: Record<string, unknown>;
  special_ids: Record<string, number>;
  cases: WpCase[];
}

const fixtureCases = (): FixtureCase[] => JSON.parse(fs.readFileSync(path.join(BERT_TINY, 'expected_outputs.json'), 'utf8')).cases;
const wpSettings = (): WpSetting[] => JSON.parse(fs.readFileSync(path.join(WP, 'expected_tokens.json'), 'utf8')).settings;

function dirWith(name: string, files: Record<string, string>): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const [f, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), content);
  return dir;
}

const vocabLines = () => fs.readFileSync(path.join(WP, 'vocab.txt'), 'utf8').split('\n').slice(0, -1);

test('bert_tiny: tokens, ids, offsets and token types of all three cases equal Hugging Face BertTokenizer', async () => {
  const tok = await loadTokenizer(BERT_TINY);
  assert.equal(tok.kind, 'wordpiece');
  assert.deepEqual(tok.special, { pad: 0, cls: 5, sep: 6, unk: 4, mask: 7 });
  const cases = fixtureCases();
  assert.equal(cases.length, 3);
  for (const c of cases) {
    const input = buildModelInput(tok, c.text, c.text_pair);
    assert.deepEqual(
      input.tokens.map((t) => t.text),
      c.tokens,
      c.name,
    );
    assert.deepEqual(input.ids, c.input_ids, c.name);
    assert.deepEqual(input.tokenTypeIds, c.token_type_ids, c.name);
    // The fixture gives null for the specials the tokenizer adds; its texts are in the BMP, so code points = UTF-16.
    assert.deepEqual(
      input.tokens.map((t) => (t.special ? null : [t.start, t.end])),
      c.offsets,
      c.name,
    );
  }
});

test('bert_tiny: a typed [MASK] is the mask token, with the six characters as its range', async () => {
  const tok = await loadTokenizer(BERT_TINY);
  const text = at(fixtureCases(), 0).text;
  const mask = tok.encode(text).find((t) => t.id === tok.special.mask)!;
  assert.equal(text.slice(mask.start, mask.end), '[MASK]');
});

test('WordPiece vocab.txt: 54 hard texts × 8 tokenizer_config settings equal Hugging Face BertTokenizer', async () => {
  const settings = wpSettings();
  assert.equal(settings.length, 8);
  let checked = 0;
  for (const s of settings) {
    const dir = dirWith(`setting-${s.name}`, {
      'vocab.txt': fs.readFileSync(path.join(WP, 'vocab.txt'), 'utf8'),
      'tokenizer_config.json': JSON.stringify(s.tokenizer_config),
    });
    const tok = await loadTokenizer(dir);
    assert.deepEqual(tok.special, s.special_ids, s.name);
    for (const c of s.cases) {
      const got = tok.encode(c.text);
      const what = `${s.name}: ${JSON.stringify(c.text).slice(0, 60)}`;
      assert.deepEqual(
        got.map((t) => t.text),
        c.tokens,
        what,
      );
      assert.deepEqual(
        got.map((t) => t.id),
        c.ids,
        what,
      );
      assert.deepEqual(
        got.map((t) => [t.start, t.end]),
        c.offsets,
        what,
      );
      checked++;
    }
  }
  assert.equal(checked, 8 * 54);
});

test('WordPiece: an [UNK] covers its whole word, a ## piece only its own characters, astral characters two units', async () => {
  const tok = await loadTokenizer(dirWith('shapes', { 'vocab.txt': vocabLines().join('\n') + '\n' }));
  const at = (text: string) => tok.encode(text).map((t) => [t.text, text.slice(t.start, t.end)]);
  assert.deepEqual(at('Unbelievable'), [
    ['un', 'Un'],
    ['##believ', 'believ'],
    ['##able', 'able'],
  ]);
  assert.deepEqual(at('a😀b'), [
    ['a', 'a'],
    ['##😀', '😀'],
    ['##b', 'b'],
  ]);
  assert.deepEqual(at('xq! ÀÉÎ'), [
    ['x', 'x'],
    ['##q', 'q'],
    ['!', '!'],
    ['a', 'À'],
    ['##e', 'É'],
    ['##i', 'Î'],
  ]);
  assert.deepEqual(at('#ok'.padEnd(104, 'k')), [
    ['#', '#'],
    ['[UNK]', 'ok'.padEnd(103, 'k')],
  ]);
});

test('vocab.txt: CRLF lines, a repeated line (the later id wins, as in Python) and a vocabulary without [CLS]', async () => {
  const lines = vocabLines();
  const crlf = await loadTokenizer(dirWith('crlf', { 'vocab.txt': [...lines, 'hello'].join('\r\n') + '\r\n' }));
  assert.equal(at(crlf.encode('hello'), 0).id, lines.length);
  assert.equal(crlf.idToPiece(lines.indexOf('hello')), 'hello');
  const noCls = lines.filter((l) => l !== '[CLS]');
  await assert.rejects(
    loadTokenizer(dirWith('nocls', { 'vocab.txt': noCls.join('\n') })),
    (e: Error) => e.name === 'LensError' && /vocab\.txt has no \[CLS\] token/.test(e.message),
  );
  await assert.rejects(
    loadTokenizer(dirWith('emptyvocab', { 'vocab.txt': '' })),
    (e: Error) => e.name === 'LensError' && /vocab\.txt is empty/.test(e.message),
  );
});

test('tokenizer_config.json: wrong types and Japanese word splitting are refused with the file and key named', async () => {
  const vocab = vocabLines().join('\n');
  await assert.rejects(
    loadTokenizer(dirWith('badflag', { 'vocab.txt': vocab, 'tokenizer_config.json': '{"do_lower_case": "yes"}' })),
    (e: Error) => e.name === 'LensError' && /tokenizer_config\.json: do_lower_case must be true or false/.test(e.message),
  );
  await assert.rejects(
    loadTokenizer(dirWith('badsplit', { 'vocab.txt': vocab, 'tokenizer_config.json': '{"never_split": "[FOO]"}' })),
    (e: Error) => e.name === 'LensError' && /never_split must be a list of strings/.test(e.message),
  );
  await assert.rejects(
    loadTokenizer(dirWith('japanese', { 'vocab.txt': vocab, 'tokenizer_config.json': '{"tokenizer_class": "BertJapaneseTokenizer"}' })),
    (e: Error) => e.name === 'LensError' && e.message.includes('BertJapaneseTokenizer') && (e as { code?: string }).code === 'unsupported',
  );
});

/** tokenizer.json as transformers' BertConverter writes it for a vocab.txt with these settings. */
function bertTokenizerJson(lowercase: boolean, stripAccents: boolean | null): object {
  const vocab: Record<string, number> = {};
  vocabLines().forEach((p, id) => {
    vocab[p] = id;
  });
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((c) => ({
    id: vocab[c],
    content: c,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: stripAccents, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((c) => [c, { id: c, ids: [vocab[c]], tokens: [c] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

test('tokenizer.json WordPiece (BertNormalizer + BertPreTokenizer): ids equal @huggingface/tokenizers', async () => {
  const settings = wpSettings();
  for (const [lower, strip] of [
    [true, null],
    [false, null],
    [true, false],
    [false, true],
  ] as const) {
    const json = bertTokenizerJson(lower, strip);
    const dir = dirWith(`json-${lower}-${strip}`, { 'tokenizer.json': JSON.stringify(json) });
    const tok = await loadTokenizer(dir);
    assert.equal(tok.kind, 'tokenizer.json');
    assert.deepEqual(tok.special, { pad: 0, cls: 5, sep: 6, unk: 4, mask: 7 });
    const hf = new HfTokenizer(json, {});
    for (const c of at(settings, 0).cases) {
      // Two texts where the library departs from Rust's tokenizers (and Python's BertTokenizer, whose results
      // for them are in the fixture): it lower-cases the whole string, so a final "Σ" becomes "ς" rather than
      // "σ", and it does not space out CJK ideographs outside the BMP (U+20000…).
      if (c.text.includes('ΣΊΣΥΦΟΣ') || c.text.includes('𠀀')) continue;
      const ids = tok.encode(c.text).map((t) => t.id);
      assert.deepEqual(
        ids,
        hf.encode(c.text, { add_special_tokens: false }).ids,
        `${lower}/${strip}: ${JSON.stringify(c.text).slice(0, 60)}`,
      );
    }
  }
});

test('tokenizer.json WordPiece, uncased: tokens and offsets equal Python BertTokenizer on all 54 texts', async () => {
  const dir = dirWith('json-uncased', { 'tokenizer.json': JSON.stringify(bertTokenizerJson(true, null)) });
  const tok = await loadTokenizer(dir);
  const uncased = wpSettings().find((s) => s.name === 'uncased')!;
  let compared = 0;
  for (const c of uncased.cases) {
    // Uncased, the Rust pipeline (no NFC, accents stripped) gives what the Python one gives; cased it need not.
    const got = tok.encode(c.text);
    assert.deepEqual(
      got.map((t) => [t.text, t.start, t.end]),
      c.tokens.map((t, k) => [t, ...at(c.offsets, k)]),
      JSON.stringify(c.text).slice(0, 60),
    );
    compared++;
  }
  assert.equal(compared, 54);
});

test('buildModelInput: [CLS] A [SEP] B [SEP] with token types, specials placed at the ends of their texts', async () => {
  const tok: Tokenizer = await loadTokenizer(BERT_TINY);
  const one = buildModelInput(tok, 'the cat');
  assert.deepEqual(one.ids, [5, 102, 151, 6]);
  assert.deepEqual(one.tokenTypeIds, [0, 0, 0, 0]);
  assert.deepEqual(
    one.tokens.map((t) => [t.start, t.end, t.special]),
    [
      [0, 0, true],
      [0, 3, false],
      [4, 7, false],
      [7, 7, true],
    ],
  );
  const two = buildModelInput(tok, 'the cat', 'sat');
  assert.deepEqual(
    two.tokens.map((t) => t.text),
    ['[CLS]', 'the', 'cat', '[SEP]', 'sat', '[SEP]'],
  );
  assert.deepEqual(two.tokenTypeIds, [0, 0, 0, 0, 1, 1]);
  assert.deepEqual(
    two.tokens.slice(4).map((t) => [t.start, t.end]),
    [
      [0, 3],
      [3, 3],
    ],
  );
});

test('a BERT folder without vocab.txt: the message names the files BERT needs', async () => {
  const dir = dirWith('novocab', { 'config.json': fs.readFileSync(path.join(BERT_TINY, 'config.json'), 'utf8') });
  await assert.rejects(loadTokenizer(dir), (e: Error & { code?: string }) => e.code === 'not-found' && /vocab\.txt/.test(e.message));
  const e = missingTokenizerError(dir, 'bert');
  assert.equal(e.code, 'not-found');
  assert.match(
    e.message,
    new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has no tokenizer: BERT reads vocab\\.txt .* or tokenizer\\.json`),
  );
  assert.ok(!e.message.includes('spm.model') && !e.message.includes('\n'));
  assert.match(missingTokenizerError(dir, 'deberta').message, /spm\.model, tokenizer\.json, or vocab\.json \+ merges\.txt/);
});
