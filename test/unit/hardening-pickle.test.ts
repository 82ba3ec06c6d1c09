// Issue 26's fuzz findings on the pickle reader: the byte cap on data.pkl bounds bytes, not objects, nor the cost
// of one integer. Each hostile pickle must end in one short line, fast and without a large heap.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { MAX_PICKLE_MEMO, MAX_PICKLE_STACK, MAX_PICKLE_VALUES, unpickle, type PickleHooks } from '../../src/engine/checkpoint/pickle';
import { readTorchBin } from '../../src/engine/checkpoint/torch-bin';
import { writeZip } from '../../tools/fixtures/write-torch-bin';
import { rejectsLens, tempDir } from './checkpoint-test-utils';

const HOOKS: PickleHooks = {
  findClass: () => {
    throw new Error('no globals here');
  },
  reduce: () => null,
  persistentLoad: () => null,
  build: () => undefined,
};

/** A torch-style .bin whose data.pkl is `pickle`. */
function binWith(pickle: Uint8Array, name: string): string {
  const file = path.join(tempDir(name), 'pytorch_model.bin');
  writeZip(file, [{ name: 'archive/data.pkl', data: pickle, deflate: true }], false);
  return file;
}

test('hardening: 32 MiB of EMPTY_DICT opcodes is refused by the value budget, not the V8 heap', async () => {
  const ops = new Uint8Array(32 * 2 ** 20).fill(0x7d);
  ops[0] = 0x80;
  ops[1] = 2;
  const file = binWith(ops, 'dicts');
  const before = process.memoryUsage().heapUsed;
  await rejectsLens(() => readTorchBin(file), 'unsafe', file, 'refusing to load: the pickle holds more than');
  assert.ok(process.memoryUsage().heapUsed - before < 512 * 2 ** 20, 'the heap stayed bounded');
  // The same dicts APPENDed to one list keep the stack short: the count of values stops them.
  const appended = new Uint8Array(32 * 2 ** 20).fill(0x61);
  appended.set([0x80, 2, 0x5d]);
  for (let k = 3; k < appended.length - 1; k += 2) appended[k] = 0x7d;
  const file2 = binWith(appended, 'appended');
  await rejectsLens(() => readTorchBin(file2), 'unsafe', file2, `more than ${MAX_PICKLE_VALUES} values`);
  assert.ok(process.memoryUsage().heapUsed - before < 512 * 2 ** 20, 'the heap stayed bounded');
});

test('hardening: the pickle stack depth and memo size are budgeted', async () => {
  // MARK pushes without allocating much; 600k of them pass no value budget but the stack's.
  const marks = Uint8Array.from([0x80, 2, ...new Array<number>(MAX_PICKLE_STACK + 10).fill(0x28), 0x2e]);
  await rejectsLens(() => unpickle(marks, 'marks.pkl', HOOKS), 'unsafe', 'marks.pkl', 'on its stack at once');
  // One value memoised under ever new LONG_BINPUT keys.
  const puts: number[] = [0x80, 2, 0x4e];
  for (let k = 0; k <= MAX_PICKLE_MEMO; k++) puts.push(0x72, k & 0xff, (k >> 8) & 0xff, (k >> 16) & 0xff, 0);
  puts.push(0x2e);
  await rejectsLens(() => unpickle(Uint8Array.from(puts), 'memo.pkl', HOOKS), 'unsafe', 'memo.pkl', 'memo entries');
});

test('hardening: a 1 MiB LONG4 (quadratic BigInt) and a 9-byte LONG1 are refused at once', async () => {
  const big = new Uint8Array(2 + 1 + 4 + 2 ** 20 + 1);
  big.set([0x80, 2, 0x8b]);
  new DataView(big.buffer).setUint32(3, 2 ** 20, true);
  big.fill(0x7f, 7, 7 + 2 ** 20);
  big[big.length - 1] = 0x2e;
  const t0 = performance.now();
  await rejectsLens(() => unpickle(big, 'long4.pkl', HOOKS), 'unsafe', 'long4.pkl', '1048576-byte LONG4 integer');
  assert.ok(performance.now() - t0 < 2000, 'refused before any arithmetic');
  const long1 = Uint8Array.from([0x80, 2, 0x8a, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x2e]);
  await rejectsLens(() => unpickle(long1, 'long1.pkl', HOOKS), 'unsafe', '9-byte LONG1');
  // Eight bytes (torch writes sizes beyond 2^31 this way) still read.
  const ok = Uint8Array.from([0x80, 2, 0x8a, 8, 0, 0, 0, 0, 1, 0, 0, 0, 0x2e]);
  assert.equal(unpickle(ok, 'ok.pkl', HOOKS), 2 ** 32);
});

test('hardening: opcodes a state dict never needs are refused by name', async () => {
  for (const [op, name] of [
    [0x69, 'INST'],
    [0x81, 'NEWOBJ'],
    [0x92, 'NEWOBJ_EX'],
    [0x6f, 'OBJ'],
    [0x82, 'EXT1'],
    [0x8f, 'EMPTY_SET'],
    [0x96, 'BYTEARRAY8'],
    [0xff, 'not a pickle opcode'],
  ] as const) {
    const bytes = Uint8Array.from([0x80, 2, op, 0x2e]);
    await rejectsLens(() => unpickle(bytes, 'x.pkl', HOOKS), 'unsafe', `opcode 0x${op.toString(16)} (${name}) at byte 2`);
  }
});
