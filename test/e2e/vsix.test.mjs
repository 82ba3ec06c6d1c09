// The packaged extension: what the VSIX holds, and that code-server installs it and it explains text
// (onnxruntime-node loading from inside the installed VSIX, not from this checkout).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extensionMissing, startLens, waitHeatmapDrawn, waitReady } from './lib/lens.mjs';
import { packageVsix, vsixEntries } from './lib/vsix.mjs';
import { openFile, runCommand, screenshot, selectLines } from './lib/workbench.mjs';

const skip = extensionMissing();

describe('the VSIX', { skip: skip ?? false }, () => {
  let vsix, entries;
  before(async () => {
    vsix = packageVsix();
    entries = await vsixEntries(vsix);
  });
  after(() => {
    if (vsix) fs.rmSync(path.dirname(vsix), { recursive: true, force: true });
  });

  test('holds the bundles and the Linux x64 onnxruntime binding', () => {
    const names = entries.map((e) => e.name);
    for (const f of [
      'extension/dist/extension.js',
      'extension/dist/runtime-worker.js',
      'extension/dist/load-process.js',
      'extension/dist/tokenizer-thread.js',
      'extension/dist/atlas-thread.js',
      'extension/dist/webview.js',
      'extension/package.json',
    ]) {
      assert.ok(names.includes(f), `${f} is in the VSIX`);
    }
    assert.ok(
      names.some((n) => /^extension\/node_modules\/onnxruntime-node\/bin\/napi-v\d+\/linux\/x64\/.*\.node$/.test(n)),
      'onnxruntime-node linux/x64 binding is in the VSIX',
    );
  });

  test("leaves out other platforms' binaries, sources and tests (.vscodeignore)", () => {
    const names = entries.map((e) => e.name);
    const stray = names.filter(
      (n) => /onnxruntime-node\/bin\/napi-v\d+\/(darwin|win32)\//.test(n) || /^extension\/(src|test|out)\//.test(n),
    );
    const mb = fs.statSync(vsix).size / 2 ** 20;
    assert.deepEqual(
      stray.slice(0, 5),
      [],
      `${stray.length} files that belong out of the VSIX (${mb.toFixed(1)} MB); add them to .vscodeignore`,
    );
    // Four bundled models of ~21 MB each (two encoders, two fine-tuned pair classifiers) and one platform's runtime.
    assert.ok(mb < 100, `VSIX is ${mb.toFixed(1)} MB`);
  });

  test('code-server installs it and Explain works from the installed copy', async () => {
    const lens = await startLens({ name: 'vsix', vsix, files: { 'v.txt': 'Packaged extensions explain text too.\n' } });
    try {
      await openFile(lens.page, 'v.txt');
      await selectLines(lens.page, 1, 1);
      await runCommand(lens.page, 'DeBERTa Lens: Explain Attention');
      await waitReady(lens.frame);
      await waitHeatmapDrawn(lens.frame);
      await screenshot(lens.page, 'vsix-explained');
    } finally {
      await lens.stop();
    }
  });
});

if (skip) test(`VSIX tests skipped: ${skip}`, { skip }, () => {});
