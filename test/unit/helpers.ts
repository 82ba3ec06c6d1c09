import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { isLensError } from '../../src/engine/errors';

/** The repository root, from out/test/unit (compiled) or test/unit (source). */
export const REPO_ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../..' : '../..');
export const DATA = path.join(REPO_ROOT, 'test', 'data');
export const FIXTURES = path.join(DATA, 'fixtures');

/** max |a − b| over all elements, and the largest |b| (for relative error per matrix). */
export function compareNested(got: Float32Array, want: unknown[]): { maxDiff: number; maxAbs: number } {
  const flat = want.flat(2) as number[];
  assert.equal(got.length, flat.length, 'shape');
  let maxDiff = 0, maxAbs = 0;
  flat.forEach((w, k) => {
    maxAbs = Math.max(maxAbs, Math.abs(w));
    maxDiff = Math.max(maxDiff, Math.abs(w - got[k]));
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
