// The fuzz's oracle: each way a run can go wrong is sorted into its finding, so a fuzz run that reports none has
// looked (runs made up here; the families' real runs are in fuzz.test.ts).
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FuzzCase, judge } from './fuzz/judge';
import type { RawRun } from './fuzz/run-case';

const run = (r: Partial<RawRun>): RawRun => ({ code: 1, signal: null, stdout: '', stderr: '', ms: 10, peakRss: 0, ...r });
const ERR: FuzzCase = { what: 'x', args: [], expect: 'error', names: /config\.json/ };
const RESULT: FuzzCase = { what: 'x', args: [], expect: 'result', check: (out) => (out === 'good' ? undefined : 'numbers differ') };
const GOOD_JSON = JSON.stringify({ input_ids: [1], tokens: [{ id: 1, start: 0, end: 0 }], layers: [{ layer: 0, probs: [[[1]]] }] });

test('fuzz judge: refusals are clear only as one named line', () => {
  assert.equal(judge(ERR, run({ stderr: 'deberta-lens: /m/config.json: bad\n' })).outcome, 'clear error');
  assert.equal(judge(ERR, run({ stderr: 'deberta-lens: something failed\n' })).outcome, 'unclear error');
  assert.equal(judge(ERR, run({ stderr: 'deberta-lens: internal error: x (config.json)\n' })).outcome, 'internal error');
  assert.equal(judge(ERR, run({ stderr: 'TypeError: x\n    at f (a.js:1)\n' })).outcome, 'crash');
  assert.equal(judge(ERR, run({ code: 134, stderr: 'FATAL ERROR: Reached heap limit\n' })).outcome, 'crash');
  assert.equal(judge(ERR, run({ code: null, signal: 'SIGABRT' })).outcome, 'crash');
  assert.equal(judge(ERR, run({ stderr: `deberta-lens: config.json ${'x'.repeat(900)}\n` })).outcome, 'unclear error');
});

test('fuzz judge: results are checked, and a result or refusal where the other was due is a finding', () => {
  assert.equal(judge(RESULT, run({ code: 0, stdout: 'good' })).outcome, 'correct result');
  assert.equal(judge(RESULT, run({ code: 0, stdout: 'bad' })).outcome, 'silent wrong');
  assert.equal(judge(RESULT, run({ stderr: 'deberta-lens: config.json: no\n' })).outcome, 'false refusal');
  assert.equal(judge(ERR, run({ code: 0, stdout: GOOD_JSON })).outcome, 'silent wrong');
  const either: FuzzCase = { what: 'x', args: [], expect: 'either' };
  assert.equal(judge(either, run({ code: 0, stdout: GOOD_JSON })).outcome, 'correct result');
  const nan = GOOD_JSON.replace('[[[1]]]', '[[[null]]]');
  assert.equal(judge(either, run({ code: 0, stdout: nan })).outcome, 'silent wrong');
});

test('fuzz judge: stopped runs and closed stdout', () => {
  assert.equal(judge(RESULT, run({ stopped: 'hang', code: null, signal: 'SIGKILL' })).outcome, 'hang');
  assert.equal(judge(RESULT, run({ stopped: 'over memory', code: null, signal: 'SIGKILL' })).outcome, 'over memory');
  const head: FuzzCase = { what: 'x', args: [], expect: 'result', stdout: 'close-early' };
  assert.equal(judge(head, run({ code: 0 })).outcome, 'correct result');
  assert.equal(judge(head, run({ code: 0, stderr: 'Error: write EPIPE\n' })).outcome, 'crash');
});
