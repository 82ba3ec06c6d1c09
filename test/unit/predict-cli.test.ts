// `deberta-lens predict` as users run it (dist/cli.js), and fill-mask on the bundled model out of the box.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { assertOneLineError } from './head-asserts';
import { FIXTURES, REPO_ROOT, at } from './helpers';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-predict-cli-'));
const env = { ...process.env, XDG_CACHE_HOME: path.join(tmp, 'cache') };
const fixture = (name: string) => path.join(FIXTURES, 'deberta', name);
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'predict', '--threads', '2', ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(r: ReturnType<typeof cli>) {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('deberta-lens predict', () => {
  it('prints predictions for every [MASK] in the documented shape', () => {
    const out = json(cli('--model', fixture('v3_tiny_mlm_cls'), '--text', 'attention to [MASK] and [MASK] terms', '--top', '3'));
    assert.deepEqual(
      out.predictions.map((p: { position: number }) => p.position),
      [6, 9],
    );
    for (const p of out.predictions) {
      assert.equal(p.top.length, 3);
      for (const t of p.top) assert.deepEqual(Object.keys(t).sort(), ['id', 'logit', 'prob', 'token']);
      assert.ok(p.top[0].logit >= p.top[1].logit && p.top[1].logit >= p.top[2].logit);
    }
    assert.equal(out.rtd, undefined);
    assert.equal(out.mlm_head, 'cls.predictions');
  });

  it('--positions masks the token first and reports how the model rates the original', () => {
    const out = json(cli('--model', fixture('v3_tiny_mlm_cls'), '--ids', '1,4,29,6,10,2', '--positions', '3,1'));
    assert.deepEqual(
      out.predictions.map((p: { position: number; source: string }) => [p.position, p.source]),
      [
        [1, 'masked'],
        [3, 'masked'],
      ],
    );
    assert.equal(out.predictions[1].original.id, 6);
    assert.equal(out.predictions[1].top.length, 5);
  });

  it('with an RTD head, "rtd" has a logit for every token', () => {
    const out = json(cli('--model', fixture('v3_tiny_rtd'), '--text', 'a tiny random model'));
    assert.deepEqual(out.predictions, []);
    assert.deepEqual(
      out.rtd.map((s: { position: number }) => s.position),
      out.tokens.map((_: unknown, i: number) => i),
    );
    assert.ok(out.rtd.every((s: { logit: number }) => Number.isFinite(s.logit)));
  });

  it('one clear line each: no [MASK] and no --positions, no head, a bad --top', () => {
    assertOneLineError(
      cli('--model', fixture('v3_tiny_mlm_cls'), '--text', 'a tiny model'),
      /nothing to predict: the input has no \[MASK\] token and no positions were given/,
    );
    assertOneLineError(cli('--model', fixture('v2_tiny'), '--ids', '1,5,2'), /has no prediction head/);
    assertOneLineError(cli('--model', fixture('v3_tiny_mlm_cls'), '--text', 'a [MASK]', '--top', 'x'), /--top takes a positive integer/);
  });
});

describe('deberta-lens info names the prediction heads', () => {
  it('by key layout, or says there is none', () => {
    const info = (name: string) => spawnSync(process.execPath, [CLI, 'info', '--model', fixture(name)], { encoding: 'utf8', env }).stdout;
    assert.match(info('v3_tiny_mlm_cls'), /predicts {5}masked LM \(cls\.predictions\.\*\)\n/);
    assert.match(info('v3_tiny_rtd'), /predicts {5}replaced-token detection \(mask_predictions\.\*\)\n/);
    assert.match(info('v2_tiny'), /predicts {5}none: a bare encoder/);
    const json = JSON.parse(spawnSync(process.execPath, [CLI, 'info', '--model', 'default', '--json'], { encoding: 'utf8', env }).stdout);
    // The bundled model's head under microsoft's names, the head its Enhanced Mask Decoder feeds.
    assert.deepEqual(json.prediction_heads, ['lm_predictions.lm_head']);
  });
});

describe('fill-mask on the bundled model', () => {
  // The model card's fill-mask table, computed by the training code (PyTorch), not by this engine: the plain head on
  // the last hidden state (--no-emd), which the Enhanced Mask Decoder's training left exactly as it was.
  const card: [string, string[], number[]][] = [
    [
      'The old man walked slowly down the [MASK] to the village.',
      ['road', 'way', 'street', 'steps', 'village'],
      [0.18, 0.08, 0.06, 0.04, 0.03],
    ],
    [
      'She opened the [MASK] and looked out into the dark night.',
      ['door', 'room', 'window', 'garden', 'house'],
      [0.45, 0.06, 0.04, 0.02, 0.01],
    ],
    ['The function returns a [MASK] of strings.', ['list', 'tuple', 'sequence', 'pair', 'couple'], [0.29, 0.15, 0.12, 0.07, 0.04]],
  ];
  for (const [text, words, probs] of card) {
    it(`"${text}" → ${words[0]}, as the model card says`, () => {
      const out = json(cli('--model', 'default', '--text', text, '--no-emd'));
      assert.equal(out.decoder, 'plain');
      const [p] = out.predictions;
      assert.deepEqual(
        p.top.map((t: { token: string }) => t.token.replace(/^▁/, '')),
        words,
      );
      // The card rounds twice (3 decimals in the evaluation JSON, then 2): 0.0547 → 0.055 → 0.06.
      const round3 = (x: number) => Math.round(x * 1000) / 1000;
      p.top.forEach((t: { prob: number }, k: number) =>
        assert.ok(Math.abs(round3(t.prob) - at(probs, k)) <= 0.005 + 1e-9, `${words[k]}: ${t.prob} vs ${probs[k]}`),
      );
    });
  }

  // Through the Enhanced Mask Decoder the third blank reads "couple" (microsoft's code agrees:
  // default-model-emd.test.ts); the plain head gives the card's words.
  it('the fill-mask sample predicts each [MASK] (plain head)', () => {
    const out = json(cli('--model', 'default', '--file', path.join(REPO_ROOT, 'samples', 'fill-mask.md'), '--top', '1', '--no-emd'));
    assert.deepEqual(
      out.predictions.map((p: { top: { token: string }[] }) => at(p.top, 0).token),
      ['▁door', '▁hand', '▁list'],
    );
  });
});
