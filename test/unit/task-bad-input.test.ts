// Task-head configs the committed bad fixtures (task-heads.test.ts) do not cover, built here from v3_seqcls_3 in a
// temp dir: num_labels without id2label against the classifier, num_labels against id2label, malformed ids and names,
// a problem_type that is not a string, and a config.json that can no longer be read as the checkpoint loaded it.
// Each refusal is one line naming config.json or the weights; explain still works on the encoder.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { findHeads } from '../../src/engine/checkpoint/heads';
import { openModel } from '../../src/engine/model/open-model';
import { FIXTURES } from './helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-task-bad-'));
const cacheDir = path.join(tmp, 'cache');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const SOURCE = path.join(FIXTURES, 'task-heads', 'v3_seqcls_3');
const config = JSON.parse(fs.readFileSync(path.join(SOURCE, 'config.json'), 'utf8')) as Record<string, unknown>;

/** v3_seqcls_3 (three labels, classifier [3, 32]) with config.json edited: `edit` returns the new config. */
function variant(name: string, edit: (c: Record<string, unknown>) => Record<string, unknown>): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const f of fs.readdirSync(SOURCE)) fs.copyFileSync(path.join(SOURCE, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(edit(structuredClone(config)), null, 2));
  return dir;
}
const without = (c: Record<string, unknown>, ...keys: string[]) => {
  for (const k of keys) delete c[k];
  return c;
};

const BAD: Record<string, [(c: Record<string, unknown>) => Record<string, unknown>, RegExp]> = {
  num_labels_without_id2label: [
    (c) => ({ ...without(c, 'id2label', 'label2id'), num_labels: 5 }),
    /model\.safetensors: tensor 'classifier\.weight' has shape \[3, 32\], expected \[5, 32\]: config\.json has no id2label \(so 5 labels\); the config and the classifier do not belong together/,
  ],
  num_labels_vs_id2label: [(c) => ({ ...c, num_labels: 2 }), /config\.json: num_labels 2 disagrees with the 3 labels of id2label/],
  num_labels_not_a_count: [
    (c) => ({ ...without(c, 'id2label', 'label2id'), num_labels: '3' }),
    /config\.json: num_labels must be a positive integer, got "3"/,
  ],
  num_labels_zero: [
    (c) => ({ ...without(c, 'id2label', 'label2id'), num_labels: 0 }),
    /config\.json: num_labels must be a positive integer, got 0/,
  ],
  id2label_not_ids: [
    (c) => ({ ...c, id2label: { 0: 'a', one: 'b', 2: 'c' } }),
    /config\.json: id2label's ids \(0, 2, one\) are not 0…2: every label from 0 up must be named, with no holes/,
  ],
  id2label_name_not_text: [
    (c) => ({ ...c, id2label: { 0: 'a', 1: 7, 2: 'c' } }),
    /config\.json: id2label names label 1 with 7, not a string/,
  ],
  id2label_a_list: [
    (c) => ({ ...c, id2label: ['a', 'b', 'c'] }),
    /config\.json: id2label must map label ids to names, got \["a","b","c"\]/,
  ],
  id2label_duplicate_three: [
    (c) => ({ ...c, id2label: { 0: 'yes', 1: 'no', 2: 'yes' } }),
    /config\.json: id2label names labels 0 and 2 both "yes": a prediction could not be named; give each label its own name/,
  ],
  problem_type_not_text: [
    (c) => ({ ...c, problem_type: 3 }),
    /config\.json: problem_type 3 is not one of single_label_classification, multi_label_classification, regression; fix the config/,
  ],
};

describe('task-head configs to refuse, each in one line; explain still works', () => {
  for (const [name, [edit, pattern]] of Object.entries(BAD)) {
    it(name, async () => {
      const model = await openModel(variant(name, edit), { cacheDir, executionProvider: 'cpu', threads: 2 });
      try {
        const refusal = (e: unknown) => {
          const msg = (e as Error).message;
          assert.match(msg, pattern);
          assert.ok(!msg.includes('\n'), msg);
          return true;
        };
        await assert.rejects(model.predict({ text: 'the cat sat on the mat.', pair: 'a dog ran.' }), refusal);
        await assert.rejects(model.sweep({ text: 'the cat sat on the mat.', terms: ['c2p'] }), refusal);
        const r = await model.explain({ text: 'the cat sat on the mat.', pair: 'a dog ran.' });
        try {
          assert.equal((await r.load(1)).probs.length, 4 * r.tokens.length ** 2);
        } finally {
          r.release();
        }
      } finally {
        await model.dispose();
      }
    });
  }
});

describe('config.json read again for the heads goes through the checked reader', () => {
  it('changed to bad JSON after loading: the head is refused in one line that names the file and the place', async () => {
    const dir = variant('changed_after_load', (c) => c);
    const ck = await loadCheckpoint(dir, { hash: false });
    assert.ok(findHeads(ck).task, 'the head is found while config.json is whole');
    fs.writeFileSync(path.join(dir, 'config.json'), '{"id2label": {"0": "a",\n  oops');
    const heads = findHeads(ck);
    assert.equal(heads.task, undefined);
    assert.match(heads.taskProblem ?? '', /config\.json: config\.json is not valid JSON \(line 2, column 3\); re-download it\./);
    assert.doesNotMatch(heads.taskProblem ?? '', /oops/, 'the file is not quoted');
  });

  it('grown past the size limit: refused before it is read, not parsed', async () => {
    const dir = variant('grown_after_load', (c) => c);
    const ck = await loadCheckpoint(dir, { hash: false });
    fs.writeFileSync(path.join(dir, 'config.json'), `{"pad": "${'x'.repeat(17 * 2 ** 20)}"}`);
    assert.match(findHeads(ck).taskProblem ?? '', /config\.json.*16777216/);
  });
});

describe('a tokenizer with no [SEP]', () => {
  /** bert_seqcls (a WordPiece BERT classifier) with [SEP] gone from vocab.txt (the line renamed, ids unchanged). */
  function noSep(): string {
    const from = path.join(FIXTURES, 'task-heads', 'bert_seqcls');
    const dir = path.join(tmp, 'bert_no_sep');
    fs.mkdirSync(dir);
    for (const f of fs.readdirSync(from)) fs.copyFileSync(path.join(from, f), path.join(dir, f));
    const vocab = fs.readFileSync(path.join(dir, 'vocab.txt'), 'utf8').split('\n');
    assert.ok(vocab.includes('[SEP]'));
    fs.writeFileSync(path.join(dir, 'vocab.txt'), vocab.map((l) => (l === '[SEP]' ? '[unused_sep]' : l)).join('\n'));
    return dir;
  }

  it('a pair or a text is refused in one line naming the token and the files; ids still explain and predict', async () => {
    const model = await openModel(noSep(), { cacheDir, executionProvider: 'cpu', threads: 2 });
    try {
      const line = (form: RegExp) => (e: unknown) => {
        const msg = (e as Error).message;
        assert.match(
          msg,
          /bert_no_sep: the tokenizer has no \[SEP\] token \(sep_token in tokenizer_config\.json or special_tokens_map\.json/,
        );
        assert.match(msg, form);
        assert.match(msg, /explain ids instead \(--ids\)/);
        assert.ok(!msg.includes('\n'), msg);
        return true;
      };
      await assert.rejects(
        model.predict({ text: 'the cat sat.', pair: 'a dog ran.' }),
        line(/a pair is read as \[CLS\] A \[SEP\] B \[SEP\]/),
      );
      await assert.rejects(model.explain({ text: 'the cat sat.' }), line(/a text is read as \[CLS\] text \[SEP\]/));
      const ids = [5, 20, 21, 22, 6];
      const r = await model.explain({ ids });
      try {
        assert.equal((await r.load(0)).probs.length, model.checkpoint.spec.numHeads * ids.length ** 2);
      } finally {
        r.release();
      }
      const p = await model.predict({ ids });
      assert.equal(p.classification?.labels.length, 3);
    } finally {
      await model.dispose();
    }
  });
});
