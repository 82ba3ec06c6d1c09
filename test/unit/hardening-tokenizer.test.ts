// Issue 26's fidelity findings, against Hugging Face's own outputs (special_literals.json, written by
// tools/fixtures/make-special-literal-cases.py): written special tokens on the SentencePiece path, and BERT's
// tokenizer_config.json flags written as null.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { loadTokenizer } from '../../src/engine/tokenizer';
import { encodeWithSpecials } from '../../src/engine/tokenizer/mask-literal';
import { tempDir } from './checkpoint-test-utils';
import { FIXTURES, REPO_ROOT } from './helpers';

interface Case {
  text: string;
  pieces: string[];
  ids: number[];
}
const DATA = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'tokenizer', 'special_literals.json'), 'utf8')) as {
  spm: (Case & { spm_model: string })[];
  bert: (Case & { tokenizer_config: Record<string, unknown> })[];
};

test('hardening: a written [SEP], [CLS], [UNK], [PAD] or [MASK] becomes its special id, as DebertaV2Tokenizer does', async () => {
  const byModel = new Map<string, (Case & { spm_model: string })[]>();
  for (const c of DATA.spm) byModel.set(c.spm_model, [...(byModel.get(c.spm_model) ?? []), c]);
  assert.equal(byModel.size, 2);
  for (const [model, cases] of byModel) {
    const tok = await loadTokenizer(path.dirname(path.join(REPO_ROOT, model)));
    for (const c of cases) {
      const got = encodeWithSpecials(tok, c.text);
      assert.deepEqual(
        got.map((t) => t.id),
        c.ids,
        `${model}: ${JSON.stringify(c.text)} → ${JSON.stringify(got.map((t) => t.text))}, HF ${JSON.stringify(c.pieces)}`,
      );
      // A literal covers its own characters, so the editor highlights it.
      for (const t of got.filter((t) => t.special)) assert.equal(c.text.slice(t.start, t.end), t.text);
    }
  }
});

test('hardening: BERT flags written as null in tokenizer_config.json read as false, as BertTokenizer does', async () => {
  for (const c of DATA.bert) {
    const dir = tempDir('bert-null');
    fs.copyFileSync(path.join(FIXTURES, 'bert', 'bert_tiny', 'vocab.txt'), path.join(dir, 'vocab.txt'));
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(c.tokenizer_config));
    const tok = await loadTokenizer(dir);
    assert.deepEqual(
      tok.encode(c.text).map((t) => t.id),
      c.ids,
      `${JSON.stringify(c.tokenizer_config)}: ${JSON.stringify(c.text)}, HF ${JSON.stringify(c.pieces)}`,
    );
  }
});
