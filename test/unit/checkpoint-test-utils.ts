// Shared helpers for the checkpoint tests: temp folders, fixture copies and LensError assertions.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after } from 'node:test';
import { inspect } from 'node:util';
import { isLensError, type LensErrorCode } from '../../src/engine/errors';
import type { TensorData } from '../../src/engine/types';
import { FIXTURES } from './helpers';

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
