// --file is read with a bound (a fuzz finding: --file /dev/zero read until the memory was gone), and pipes still work.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { MAX_INPUT_FILE_BYTES, readInputFile } from '../../src/cli/input-file';
import { rejectsLens, tempDir } from './checkpoint-test-utils';

test('--file: a text file is read whole; devices that never end and files over the bound are refused in one line', async () => {
  const dir = tempDir('input-file');
  const file = path.join(dir, 'a.txt');
  fs.writeFileSync(file, 'naïve café ✓ 𝔘');
  assert.equal(readInputFile(file), 'naïve café ✓ 𝔘');
  assert.equal(readInputFile(file, 100), 'naïve café ✓ 𝔘');
  await rejectsLens(() => readInputFile(file, 4), 'too-long', `--file ${file} holds more than`);
  if (fs.existsSync('/dev/zero'))
    await rejectsLens(() => readInputFile('/dev/zero', 3 * 2 ** 20), 'too-long', '--file /dev/zero holds more than');
  await rejectsLens(() => readInputFile(dir), 'not-found', `cannot read --file ${dir}: EISDIR`);
  await rejectsLens(() => readInputFile(path.join(dir, 'missing')), 'not-found', 'ENOENT');
  assert.equal(MAX_INPUT_FILE_BYTES, 16 * 2 ** 20);
});
