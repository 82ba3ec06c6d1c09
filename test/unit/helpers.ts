import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { isLensError } from '../../src/engine/errors';
import { at } from '../../src/shared/checked';

/** The repository root, from out/test/unit (compiled) or test/unit (source). */
export const REPO_ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
export const DATA = path.join(REPO_ROOT, 'test', 'data');
export const FIXTURES = path.join(DATA, 'fixtures');

/** xs[i], or a RangeError naming the index: the engine's own checked read, so a test that reads past what it got
 *  fails by name, not on `undefined`. */
export { at };

/** rec[key], or a failed assertion when the key is missing (the same idea as `at` for records). */
export function field<T>(rec: Readonly<Record<string, T>>, key: string): T {
  const v = rec[key];
  if (v === undefined) throw new assert.AssertionError({ message: `no field '${key}' (has ${Object.keys(rec).join(', ')})` });
  return v;
}

/** max |a − b| over all elements, and the largest |b| (for relative error per matrix). */
export function compareNested(got: Float32Array, want: unknown[]): { maxDiff: number; maxAbs: number } {
  const flat = want.flat(2) as number[];
  assert.equal(got.length, flat.length, 'shape');
  let maxDiff = 0,
    maxAbs = 0;
  flat.forEach((w, k) => {
    maxAbs = Math.max(maxAbs, Math.abs(w));
    maxDiff = Math.max(maxDiff, Math.abs(w - at(got, k)));
  });
  return { maxDiff, maxAbs };
}

/** Awaits a rejection with a LensError of this code whose message matches. */
export async function rejectsWith(p: Promise<unknown>, code: string, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isLensError(e), `expected a LensError, got ${inspect(e)}`);
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    return true;
  });
}
