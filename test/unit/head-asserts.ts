// Checks the prediction-head tests share: the fixtures' "≤ 1e-4 relative", float64 KL from full logits rows, and
// the CLI's one-line errors.
import * as assert from 'node:assert/strict';
import { at } from './helpers';

/** Largest |got − want| against the largest |want| of the same row: the fixtures' "≤ 1e-4 relative". */
export function assertClose(got: ArrayLike<number>, want: number[], what: string, rel = 1e-4): void {
  assert.equal(got.length, want.length, `${what}: length`);
  const scale = Math.max(...want.map(Math.abs));
  let diff = 0;
  want.forEach((w, k) => (diff = Math.max(diff, Math.abs(w - at(got, k)))));
  assert.ok(diff <= rel * scale, `${what}: max diff ${diff} vs max |x| ${scale}`);
}

/** log-softmax of a full logits row, in float64. */
export function logSoftmax(x: number[]): number[] {
  const max = Math.max(...x);
  const lse = max + Math.log(x.reduce((s, v) => s + Math.exp(v - max), 0));
  return x.map((v) => v - lse);
}

/** KL(p ‖ q) in nats from two full logits rows, in float64. */
export function klFromLogits(p: number[], q: number[]): number {
  const [lp, lq] = [logSoftmax(p), logSoftmax(q)];
  return lp.reduce((s, v, k) => s + Math.exp(v) * (v - at(lq, k)), 0);
}

/** A CLI run that failed with exactly one line "deberta-lens: …" matching `pattern`, and nothing on stdout. */
export function assertOneLineError(r: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.notEqual(r.code, 0);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(at(lines, 0), /^deberta-lens: /);
  assert.match(at(lines, 0), pattern);
}
