// Shared helpers for the checkpoint tests: temp folders, fixture copies and LensError assertions.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after } from 'node:test';
import { inspect } from 'node:util';
import { isLensError, type LensErrorCode } from '../../src/engine/errors';
import { openModel } from '../../src/engine/model/open-model';
import type { TensorData } from '../../src/engine/types';
import { FIXTURES, at } from './helpers';

export const TINY = (v: 'v1' | 'v2' | 'v3') => path.join(FIXTURES, 'deberta', `${v}_tiny`);

const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

export function tempDir(name = 'ck'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `lens-${name}-`));
  made.push(d);
  return d;
}

/** A model folder holding the fixture's config.json (and, unless `weights` is false, its model.safetensors). */
export function copyFixture(v: 'v1' | 'v2' | 'v3', name = `${v}_tiny`, weights = true): string {
  const dir = path.join(tempDir(v), name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(TINY(v), 'config.json'), path.join(dir, 'config.json'));
  if (weights) fs.copyFileSync(path.join(TINY(v), 'model.safetensors'), path.join(dir, 'model.safetensors'));
  return dir;
}

export function f32(t: TensorData): Float32Array {
  assert.equal(t.dtype, 'float32');
  return new Float32Array(t.read().slice().buffer);
}

/** Asserts that `run` fails with a one-line LensError of `code` whose message names every one of `parts`. */
export async function rejectsLens(run: () => unknown, code: LensErrorCode, ...parts: string[]): Promise<void> {
  let caught: unknown;
  try {
    await run();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught !== undefined, 'expected an error');
  assert.ok(isLensError(caught), `not a LensError: ${inspect(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const p of parts) assert.ok(caught.message.includes(p), `message lacks ${JSON.stringify(p)}: ${caught.message}`);
  assert.ok(!caught.message.includes('\n'), `message must be one line: ${caught.message}`);
}

/**
 * huggingface_hub's layout under `root`: models--microsoft--deberta-v3-tiny/{blobs/<sha>, refs/main,
 * snapshots/<rev>/<file> → ../../blobs/<sha>} holding `files` of v3_tiny. Returns the snapshot folder.
 */
export function hubSnapshot(root: string, files: string[], rev = '0123abcd'): string {
  const repo = path.join(root, 'models--microsoft--deberta-v3-tiny');
  const snap = path.join(repo, 'snapshots', rev);
  fs.mkdirSync(snap, { recursive: true });
  fs.mkdirSync(path.join(repo, 'blobs'));
  fs.mkdirSync(path.join(repo, 'refs'));
  fs.writeFileSync(path.join(repo, 'refs', 'main'), rev);
  files.forEach((f, k) => {
    const blob = `${k}f3a9c${'0'.repeat(34)}`; // blobs are named by their hash, not by the file name
    fs.copyFileSync(path.join(TINY('v3'), f), path.join(repo, 'blobs', blob));
    fs.symlinkSync(path.join('..', '..', 'blobs', blob), path.join(snap, f));
  });
  return snap;
}

interface ExpectedCase {
  input_ids: number[];
  expected: { layers: { probs: number[][][] }[] };
}
let v3Case: ExpectedCase | undefined;

/**
 * Opens `dir` (v3_tiny's weights or others), explains v3_tiny's first Hugging Face case and returns the largest
 * |p − HF's p| over every layer's probabilities, the checkpoint hash and whether the graph came from the cache.
 * When the folder has tokenizer files, the case's text must tokenize to Hugging Face's ids too (`tokenized`).
 */
export async function explainV3Case(
  dir: string,
  cacheDir: string,
): Promise<{ diff: number; hash: string; cached: boolean; tokenized: boolean }> {
  v3Case ??= JSON.parse(fs.readFileSync(path.join(TINY('v3'), 'expected_outputs.json'), 'utf8')).cases[0] as ExpectedCase;
  const c = v3Case;
  const model = await openModel(dir, { cacheDir, executionProvider: 'cpu', threads: 1 });
  try {
    const r = await model.explain({ ids: c.input_ids });
    let diff = 0;
    // Each layer's matrices come from the one-layer graph (layer.onnx) fed that layer's weights.
    for (const [l, want] of c.expected.layers.entries()) {
      const got = (await r.load(l)).probs;
      assert.equal(got.length, want.probs.flat(2).length);
      want.probs.flat(2).forEach((w, k) => (diff = Math.max(diff, Math.abs(w - at(got, k)))));
    }
    r.release();
    if (model.tokenizer) {
      // The tokenizer files load from the same layout and give Hugging Face's ids.
      const tk = JSON.parse(fs.readFileSync(path.join(TINY('v3'), 'expected_tokens.json'), 'utf8')).cases[0] as {
        text: string;
        input_ids: number[];
      };
      assert.deepEqual(
        (await model.explain({ text: tk.text, layers: [0] })).tokens.map((t) => t.id),
        tk.input_ids,
      );
    }
    return { diff, hash: model.info.checkpoint_hash, cached: model.loadTimings.graph_cached, tokenized: model.tokenizer !== undefined };
  } finally {
    await model.dispose();
  }
}
