// Bad tokenizer folders and files: each must end in one clear LensError naming the file, never a crash.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { FIXTURES, at } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-tokerr-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function dirWith(name: string, files: Record<string, string | Uint8Array>): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const [f, data] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), data);
  return dir;
}

async function rejectsWith(dir: string, pattern: RegExp): Promise<void> {
  await assert.rejects(loadTokenizer(dir), (e: Error) => {
    assert.equal(e.name, 'LensError');
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes('\n'), 'one line');
    return true;
  });
}

const spmBytes = fs.readFileSync(path.join(FIXTURES, 'tokenizer', 'spm.model'));
const v1 = (f: string) => fs.readFileSync(path.join(FIXTURES, 'deberta', 'v1_tiny', f));

test('missing folder, a file instead of a folder, and a folder without tokenizer files', async () => {
  await rejectsWith(path.join(tmp, 'nope'), /Model folder not found: .*nope/);
  const file = path.join(tmp, 'plain.txt');
  fs.writeFileSync(file, 'x');
  await rejectsWith(file, /plain\.txt is not a folder/);
  await rejectsWith(dirWith('empty', {}), /No tokenizer in .*spm\.model, vocab\.txt, tokenizer\.json, or vocab\.json \+ merges\.txt/);
});

test('truncated spm.model: cut mid-field and cut on a field boundary', async () => {
  await rejectsWith(dirWith('trunc1', { 'spm.model': spmBytes.subarray(0, 1000) }), /spm\.model is not a valid SentencePiece model/);
  // 8000 pieces come first; cutting right after them leaves a well-formed message without its specs.
  let pos = 0;
  for (let i = 0; i < 8000; i++) {
    assert.equal(spmBytes[pos], 0x0a); // field 1, length-delimited
    let len = 0;
    let shift = 0;
    let p = pos + 1;
    for (;;) {
      const b = at(spmBytes, p++);
      len |= (b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    pos = p + len;
  }
  await rejectsWith(dirWith('trunc2', { 'spm.model': spmBytes.subarray(0, pos) }), /spm\.model.*looks truncated/);
  await rejectsWith(dirWith('zero', { 'spm.model': new Uint8Array(0) }), /spm\.model/);
  await rejectsWith(dirWith('garbage', { 'spm.model': 'this is not a protobuf at all' }), /spm\.model is not a valid SentencePiece model/);
});

test('vocab.json without merges.txt, broken merges, broken vocab, missing specials', async () => {
  await rejectsWith(dirWith('nomerges', { 'vocab.json': v1('vocab.json') }), /merges\.txt not found/);
  await rejectsWith(dirWith('novocab', { 'merges.txt': v1('merges.txt') }), /vocab\.json not found/);
  await rejectsWith(
    dirWith('badmerges', { 'vocab.json': v1('vocab.json'), 'merges.txt': '#version: 0.2\nt h\nthree parts here\n' }),
    /merges\.txt line 3 is not "left right"/,
  );
  await rejectsWith(dirWith('badvocab', { 'vocab.json': '{"a": 1,', 'merges.txt': v1('merges.txt') }), /vocab\.json .*is not valid JSON/);
  await rejectsWith(
    dirWith('badids', { 'vocab.json': '{"a": "one"}', 'merges.txt': v1('merges.txt') }),
    /vocab\.json: piece "a" has id "one"/,
  );
  await rejectsWith(dirWith('nospecial', { 'vocab.json': '{"a": 0, "b": 1}', 'merges.txt': '' }), /vocab\.json has no \[PAD\] token/);
});

test('a broken tokenizer_config.json next to a good model is named', async () => {
  await rejectsWith(
    dirWith('badcfg', { 'spm.model': spmBytes, 'tokenizer_config.json': '{oops' }),
    /tokenizer_config\.json .*not valid JSON/,
  );
});
