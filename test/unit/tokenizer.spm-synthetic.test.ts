// SentencePiece features the fixture model does not have — user-defined pieces, byte fallback, no charsmap,
// kept whitespace — on tiny ModelProtos written here, with results worked out by hand from the library's rules.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { loadTokenizer } from '../../src/engine/tokenizer';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-spm-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// --- a minimal protobuf writer -------------------------------------------------------------------------
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
const key = (field: number, wire: number) => varint(field * 8 + wire);
const bytesField = (field: number, b: number[] | Uint8Array) => [...key(field, 2), ...varint(b.length), ...b];
const strField = (field: number, s: string) => bytesField(field, [...Buffer.from(s, 'utf8')]);
const intField = (field: number, n: number) => [...key(field, 0), ...varint(n)];
const floatField = (field: number, x: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(x);
  return [...key(field, 5), ...b];
};

const NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  BYTE = 6;
type Piece = [string, number, number];

function modelProto(pieces: Piece[], opts: { byteFallback?: boolean; removeExtraWhitespaces?: boolean }): Uint8Array {
  const out: number[] = [];
  for (const [piece, score, type] of pieces)
    out.push(...bytesField(1, [...strField(1, piece), ...floatField(2, score), ...intField(3, type)]));
  out.push(...bytesField(2, [...intField(3, 1), ...intField(35, opts.byteFallback ? 1 : 0), ...intField(40, 3)]));
  out.push(
    ...bytesField(3, [
      ...strField(1, 'identity'),
      ...intField(3, 1),
      ...intField(4, opts.removeExtraWhitespaces === false ? 0 : 1),
      ...intField(5, 1),
    ]),
  );
  return Uint8Array.from(out);
}

const BASE: Piece[] = [
  ['[PAD]', 0, CONTROL],
  ['[CLS]', 0, CONTROL],
  ['[SEP]', 0, CONTROL],
  ['[UNK]', 0, UNKNOWN],
  ['▁', -1, NORMAL],
  ['a', -2, NORMAL],
  ['b', -2, NORMAL],
  ['ab', -3, NORMAL],
  ['▁ab', -2.5, NORMAL],
  ['<tag>', 0, USER_DEFINED],
];
const BYTES: Piece[] = Array.from({ length: 256 }, (_, b) => [`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, 0, BYTE]);

async function load(name: string, pieces: Piece[], opts: { byteFallback?: boolean; removeExtraWhitespaces?: boolean }) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'spm.model'), modelProto(pieces, opts));
  return loadTokenizer(dir);
}
const rows = (ts: { id: number; text: string; start: number; end: number }[]) => ts.map((t) => [t.id, t.text, t.start, t.end]);

test('spm: user-defined pieces win and are not split', async () => {
  const tok = await load('user', BASE, {});
  // "▁ab<tag>b": ▁ab (-2.5) + <tag> (5·max − 0.1 = −5.1) + b (−2)
  assert.deepEqual(rows(tok.encode('ab<tag>b')), [
    [8, '▁ab', 0, 2],
    [9, '<tag>', 2, 7],
    [6, 'b', 7, 8],
  ]);
  // Unknown characters merge into one piece with the unknown id; the special ids come from the vocabulary.
  assert.deepEqual(rows(tok.encode('a??b')), [
    [4, '▁', 0, 0],
    [5, 'a', 0, 1],
    [3, '??', 1, 3],
    [6, 'b', 3, 4],
  ]);
  assert.deepEqual(tok.special, { pad: 0, cls: 1, sep: 2, unk: 3, mask: 10 });
});

test('spm: the unknown score is the lowest piece score minus 10', async () => {
  // unk = −60 − 10 = −70, so "x"+UNK(y) = 5 − 70 = −65 loses to "xy" = −59; with a penalty of 3 it would
  // win (−58). (Only a positive score lets an UNK path compete with a covering piece at all.)
  const pieces: Piece[] = [...BASE.slice(0, 5), ['x', 5, NORMAL], ['xy', -59, NORMAL], ['q', -60, NORMAL]];
  const tok = await load('penalty', pieces, {});
  assert.deepEqual(rows(tok.encode('xy')), [
    [4, '▁', 0, 0],
    [6, 'xy', 0, 2],
  ]);
  // And where no piece covers it, the unknown character is one UNK piece.
  assert.deepEqual(rows(tok.encode('xz')), [
    [4, '▁', 0, 0],
    [5, 'x', 0, 1],
    [3, 'z', 1, 2],
  ]);
});

test('spm: byte fallback splits an unknown character into byte pieces; the last one carries the range', async () => {
  const tok = await load('bytes', [...BASE, ...BYTES], { byteFallback: true });
  const id = (p: string) => BASE.length + parseInt(p, 16);
  assert.deepEqual(rows(tok.encode('aé')), [
    [4, '▁', 0, 0],
    [5, 'a', 0, 1],
    [id('C3'), '<0xC3>', 1, 1],
    [id('A9'), '<0xA9>', 1, 2],
  ]);
  const emoji = tok.encode('😀');
  assert.deepEqual(
    emoji.map((t) => [t.start, t.end]),
    [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 2],
    ],
  );
});

test('spm: with remove_extra_whitespaces off, every space is its own ▁ at its own position', async () => {
  const tok = await load('keepws', BASE, { removeExtraWhitespaces: false });
  assert.deepEqual(rows(tok.encode('a  b ')), [
    [4, '▁', 0, 0],
    [5, 'a', 0, 1],
    [4, '▁', 1, 2],
    [4, '▁', 2, 3],
    [6, 'b', 3, 4],
    [4, '▁', 4, 5],
  ]);
});

test('spm: model types other than Unigram are refused by name', async () => {
  const dir = path.join(tmp, 'bpe');
  fs.mkdirSync(dir);
  const proto = [...modelProto(BASE, {})];
  // Re-emit with model_type = BPE (2) in trainer_spec.
  const bpe = Uint8Array.from([...proto.slice(0, proto.length), ...bytesField(2, intField(3, 2))]);
  fs.writeFileSync(path.join(dir, 'spm.model'), bpe);
  await assert.rejects(loadTokenizer(dir), (e: Error) => e.name === 'LensError' && /spm\.model.*not Unigram/.test(e.message));
});
