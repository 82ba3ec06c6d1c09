// `deberta-lens predict` (dist/cli.js) says which decoder answered: the Enhanced Mask Decoder where the checkpoint
// has it, the plain head with --no-emd, and one line on stderr where the EMD cannot run.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const EMD = path.join(FIXTURES, 'emd');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-emd-cli-'));
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function predict(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'predict', '--threads', '2', ...args], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return { json: JSON.parse(r.stdout), stderr: r.stderr };
}
const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(EMD, ...parts), 'utf8'));

describe('deberta-lens predict: the decoder', () => {
  it('"decoder": "emd" by default, "plain" with --no-emd, each with its reference first choice', () => {
    const c = readJson('v3_shared_buckets', 'expected_outputs.json').cases[0];
    const model = path.join(EMD, 'v3_shared_buckets');
    const emd = predict('--model', model, '--text', c.text);
    assert.equal(emd.json.decoder, 'emd');
    assert.equal(emd.json.decoder_note, undefined);
    assert.equal(emd.stderr, '');
    const plain = predict('--model', model, '--text', c.text, '--no-emd');
    assert.equal(plain.json.decoder, 'plain');
    const firsts = (j: { predictions: { top: { id: number }[] }[] }) => j.predictions.map((p) => at(p.top, 0).id);
    assert.deepEqual(
      firsts(emd.json),
      c.expected.emd.mlm.map((m: { top5_ids: number[] }) => at(m.top5_ids, 0)),
    );
    assert.deepEqual(
      firsts(plain.json),
      c.expected.plain.mlm.map((m: { top5_ids: number[] }) => at(m.top5_ids, 0)),
    );
  });

  it('a checkpoint without the position table: one line on stderr, "decoder": "plain"', () => {
    const bad = readJson('bad', 'no_position_embeddings', 'bad_input.json');
    const r = predict('--model', path.join(EMD, 'bad', 'no_position_embeddings'), '--text', bad.case.text);
    assert.equal(r.json.decoder, 'plain');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(at(lines, 0), /^deberta-lens: .*deberta\.embeddings\.position_embeddings\.weight.*Enhanced Mask Decoder cannot run/);
    assert.equal(r.json.decoder_note, at(lines, 0).replace(/^deberta-lens: /, ''));
  });

  it('the help lists --no-emd', () => {
    const r = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', env });
    assert.match(r.stdout + r.stderr, /\[--no-emd\]/);
    assert.match(r.stdout + r.stderr, /--no-emd gives the plain head on the last hidden state/);
  });
});
