// GPT-2 byte-level BPE from vocab.json + merges.txt (DeBERTa v1), and its offsets.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { BYTE_TO_CHAR, splitGpt2 } from '../../src/engine/tokenizer/byte-level';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { FIXTURES } from './helpers';

const V1 = path.join(FIXTURES, 'deberta', 'v1_tiny');
const rows = (toks: { id: number; text: string; start: number; end: number }[]) => toks.map((t) => [t.id, t.text, t.start, t.end]);

test('bpe: v1_tiny specials and vocabulary', async () => {
  const tok = await loadTokenizer(V1);
  assert.equal(tok.kind, 'bpe');
  assert.deepEqual(tok.special, { pad: 0, cls: 1, sep: 2, unk: 3, mask: 127 });
  assert.equal(tok.idToPiece(58), 'Ġthe');
  assert.equal(tok.idToPiece(127), '[MASK]');
  assert.equal(tok.idToPiece(100), undefined, 'ids between the vocabulary and [MASK] have no piece');
});

test('bpe: merges apply by rank, offsets cover the source text', async () => {
  const tok = await loadTokenizer(V1);
  // merges: "t h", "Ġt h", "Ġth e", "e r", "i n"
  assert.deepEqual(rows(tok.encode('the other thin')), [
    [56, 'th', 0, 2],
    [8, 'e', 2, 3],
    [63, 'Ġ', 3, 4],
    [18, 'o', 4, 5],
    [56, 'th', 5, 7],
    [59, 'er', 7, 9],
    [63, 'Ġ', 9, 10],
    [56, 'th', 10, 12],
    [60, 'in', 12, 14],
  ]);
  // Rank order matters: "t h" (rank 0) fires before "Ġt h" could, so "Ġthe" is never reached.
  assert.deepEqual(rows(tok.encode('a the')), [
    [4, 'a', 0, 1],
    [63, 'Ġ', 1, 2],
    [56, 'th', 2, 4],
    [8, 'e', 4, 5],
  ]);
});

test("bpe: bytes of one character share that character's range; unknown pieces become [UNK]", async () => {
  const tok = await loadTokenizer(V1);
  const toks = tok.encode('x 😀é');
  // ' 😀é' is one pre-token: Ġ, four bytes of 😀 (UTF-16 2..4), two bytes of é (4..5).
  assert.deepEqual(rows(toks), [
    [27, 'x', 0, 1],
    [63, 'Ġ', 1, 2],
    [3, 'ð', 2, 4],
    [3, 'Ł', 2, 4],
    [3, 'ĺ', 2, 4],
    [3, 'Ģ', 2, 4],
    [3, 'Ã', 4, 5],
    [3, '©', 4, 5],
  ]);
});

test('bpe: special-token text is matched as that token (as Hugging Face does), whitespace runs split like GPT-2', async () => {
  const tok = await loadTokenizer(V1);
  assert.deepEqual(rows(tok.encode('a[MASK]  b')), [
    [4, 'a', 0, 1],
    [127, '[MASK]', 1, 7],
    [63, 'Ġ', 7, 8],
    [63, 'Ġ', 8, 9],
    [5, 'b', 9, 10],
  ]);
  assert.deepEqual(rows(tok.encode('\r\n')), [
    [3, 'č', 0, 1],
    [3, 'Ċ', 1, 2],
  ]);
});

test('bpe: GPT-2 pre-tokenizer and byte table', () => {
  const text = "I'll  go—now 42x";
  assert.deepEqual(
    splitGpt2(text).map(([s, e]) => text.slice(s, e)),
    ['I', "'ll", ' ', ' go', '—', 'now', ' 42', 'x'],
  );
  assert.equal(BYTE_TO_CHAR[0x20], 'Ġ');
  assert.equal(BYTE_TO_CHAR[0x0a], 'Ċ');
  assert.equal(BYTE_TO_CHAR[0x41], 'A');
  assert.equal(new Set(BYTE_TO_CHAR).size, 256);
});

test('bpe: add_prefix_space from tokenizer_config.json gives the first word a virtual space', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-bpe-'));
  for (const f of ['vocab.json', 'merges.txt', 'special_tokens_map.json']) fs.copyFileSync(path.join(V1, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ add_prefix_space: true }));
  const tok = await loadTokenizer(dir);
  // The added space has no source character: an empty range at 0.
  assert.deepEqual(rows(tok.encode('the')), [
    [63, 'Ġ', 0, 0],
    [56, 'th', 0, 2],
    [8, 'e', 2, 3],
  ]);
  assert.deepEqual(rows(tok.encode(' in')), [
    [63, 'Ġ', 0, 1],
    [60, 'in', 1, 3],
  ]);
  fs.rmSync(dir, { recursive: true });
});

test('bpe: a byte-complete vocabulary never needs [UNK] and keeps multi-byte offsets', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-bpe-'));
  const vocab: Record<string, number> = { '[PAD]': 0, '[CLS]': 1, '[SEP]': 2, '[UNK]': 3, '[MASK]': 4 };
  BYTE_TO_CHAR.forEach((c) => {
    vocab[c] = Object.keys(vocab).length;
  });
  // é is C3 A9 → "Ã©"; merge it and then "Ġ" + "Ã©".
  vocab['Ã©'] = Object.keys(vocab).length;
  vocab['ĠÃ©'] = Object.keys(vocab).length;
  fs.writeFileSync(path.join(dir, 'vocab.json'), JSON.stringify(vocab));
  fs.writeFileSync(path.join(dir, 'merges.txt'), '#version: 0.2\nÃ ©\nĠ Ã©\n');
  const tok = await loadTokenizer(dir);
  assert.deepEqual(rows(tok.encode('é é😀')), [
    [vocab['Ã©'], 'Ã©', 0, 1],
    [vocab['ĠÃ©'], 'ĠÃ©', 1, 3],
    [vocab['ð'], 'ð', 3, 5],
    [vocab['Ł'], 'Ł', 3, 5],
    [vocab['ĺ'], 'ĺ', 3, 5],
    [vocab['Ģ'], 'Ģ', 3, 5],
  ]);
  fs.rmSync(dir, { recursive: true });
});
