// tokenizer.json (Hugging Face fast-tokenizer format): a Unigram one converted from the fixture spm.model the
// way transformers' DebertaV2Converter does, and a byte-level BPE one from v1_tiny's files. Ids are checked
// against @huggingface/tokenizers (an independent implementation) and against our spm / vocab.json paths.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { unigramTokenizerJson } from '../../tools/fixtures/write-tokenizer-json';
import { FIXTURES, at, field } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-tokjson-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const added = (content: string, id: number) => ({
  id,
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: true,
});

const unigramJson = () => unigramTokenizerJson(path.join(FIXTURES, 'tokenizer', 'spm.model'));

function bpeJson(): object {
  const dir = path.join(FIXTURES, 'deberta', 'v1_tiny');
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'vocab.json'), 'utf8')) as Record<string, number>;
  const merges = fs
    .readFileSync(path.join(dir, 'merges.txt'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#version'));
  return {
    version: '1.0',
    added_tokens: ['[PAD]', '[CLS]', '[SEP]', '[UNK]', '[MASK]'].map((c) => added(c, field(vocab, c))),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '[UNK]',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

function writeDir(name: string, json: object): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  return dir;
}

const texts: string[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'tokenizer', 'expected_tokens.json'), 'utf8')).cases.map(
  (c: { text: string }) => c.text,
);
// tokenizers.js approximates Precompiled with NFKC and maps U+2000–U+200F (ZWJ included) to spaces; the real
// charsmap does not, so texts with those characters are not a fair comparison.
const hfJsComparable = (t: string) => !/[\u2000-\u200F\u2028\u2029\u202F\u205F\u3000\uFEFF\uFFFD\u1680\u00A0]/.test(t);

test('tokenizer.json Unigram: ids equal @huggingface/tokenizers on the fixture texts', async () => {
  const json = unigramJson();
  const tok = await loadTokenizer(writeDir('unigram', json));
  assert.equal(tok.kind, 'tokenizer.json');
  assert.deepEqual(tok.special, { pad: 0, cls: 1, sep: 2, unk: 3, mask: 8000 });
  const hf = new HfTokenizer(json, {});
  const comparable = texts.filter(hfJsComparable);
  assert.ok(comparable.length >= 160, `only ${comparable.length} comparable texts`);
  for (const text of comparable) {
    assert.deepEqual(
      tok.encode(text).map((t) => t.id),
      hf.encode(text, { add_special_tokens: false }).ids,
      JSON.stringify(text.slice(0, 60)),
    );
  }
});

test('tokenizer.json Unigram: same ids and offsets as spm.model on text without added-token literals', async () => {
  const tok = await loadTokenizer(writeDir('unigram2', unigramJson()));
  const spm = await loadTokenizer(path.join(FIXTURES, 'tokenizer'));
  let compared = 0;
  for (const text of texts) {
    if (/\[(CLS|SEP|MASK|PAD|UNK)\]/.test(text)) continue; // HF splits these out; the spm library does not
    assert.deepEqual(
      tok.encode(text).map((t) => t.id),
      spm.encode(text).map((t) => t.id),
      JSON.stringify(text.slice(0, 60)),
    );
    compared++;
  }
  assert.ok(compared >= 160);
  const simple = 'The module object is created during loading.';
  const rows = (ts: { id: number; start: number; end: number }[]) => ts.map((t) => [t.id, t.start, t.end]);
  assert.deepEqual(rows(tok.encode(simple)), rows(spm.encode(simple)));
});

test('tokenizer.json Unigram: added tokens and whitespace keep exact offsets', async () => {
  const tok = await loadTokenizer(writeDir('unigram3', unigramJson()));
  const text = 'Hello [MASK] world  café';
  const toks = tok.encode(text);
  const mask = toks.find((t) => t.id === 8000);
  assert.ok(mask);
  assert.equal(text.slice(mask.start, mask.end), '[MASK]');
  const world = toks.find((t) => t.text === '▁world');
  assert.ok(world);
  assert.equal(text.slice(world.start, world.end), 'world');
  assert.equal(at(toks, toks.length - 1).end, text.length);
  assert.equal(tok.idToPiece(8000), '[MASK]');
});

test('tokenizer.json BPE (byte-level): ids equal @huggingface/tokenizers and the vocab.json path', async () => {
  const json = bpeJson();
  const tok = await loadTokenizer(writeDir('bpe', json));
  const v1 = await loadTokenizer(path.join(FIXTURES, 'deberta', 'v1_tiny'));
  const hf = new HfTokenizer(json, {});
  assert.deepEqual(tok.special, v1.special);
  const samples = [
    'the other in, theer.',
    'there in the thin inn.',
    'Hello  world\n\ncafé [MASK] ok',
    'x 😀 y',
    "it's the end",
    '  leading and trailing  ',
    ...texts.slice(0, 40),
  ];
  for (const text of samples) {
    const ids = tok.encode(text).map((t) => t.id);
    assert.deepEqual(ids, hf.encode(text, { add_special_tokens: false }).ids, JSON.stringify(text.slice(0, 60)));
    assert.deepEqual(
      tok.encode(text).map((t) => [t.id, t.start, t.end]),
      v1.encode(text).map((t) => [t.id, t.start, t.end]),
    );
  }
});

test('tokenizer.json: unsupported model types and broken files are clear LensErrors', async () => {
  await assert.rejects(
    loadTokenizer(writeDir('wordpiece', { model: { type: 'WordPiece', vocab: {} } })),
    (e: Error) => e.name === 'LensError' && /tokenizer\.json.*WordPiece/.test(e.message),
  );
  const broken = path.join(tmp, 'broken');
  fs.mkdirSync(broken);
  fs.writeFileSync(path.join(broken, 'tokenizer.json'), '{"model": {"type": "Unigram", "vocab": [');
  await assert.rejects(loadTokenizer(broken), (e: Error) => e.name === 'LensError' && /tokenizer\.json is not valid JSON/.test(e.message));
  await assert.rejects(
    loadTokenizer(writeDir('badnorm', { normalizer: { type: 'Nmt' }, model: { type: 'Unigram', unk_id: 0, vocab: [['[UNK]', 0]] } })),
    (e: Error) => e.name === 'LensError' && /Nmt/.test(e.message),
  );
});
