// Host-side export writers against real files in a temp folder (the command passes a path; no dialogs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { readNpz } from '../../src/analysis';
import { defaultExportName, writeExport } from '../../src/extension/lens/export-files';
import { decodePngDataUrl } from '../../src/extension/common/image-file';
import { fixtureResult } from './analysis-fixture';

const result = fixtureResult('text0');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-export-'));

/** A real 1×1 PNG (signature, IHDR, IDAT, IEND; CRCs are not checked by our decoder). */
function tinyPng(): string {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    return Buffer.concat([len, Buffer.from(type), data, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

test('npz export reads back as the same result', async () => {
  const f = path.join(dir, 'r.npz');
  await writeExport(result, 'npz', f);
  const back = readNpz(new Uint8Array(fs.readFileSync(f)), f);
  assert.equal(back.n, result.n);
  assert.deepEqual([...back.tensor(1, 'p2c')], [...result.tensor(1, 'p2c')]);
});

test('json export is valid JSON with every layer', async () => {
  const f = path.join(dir, 'r.json');
  await writeExport(result, 'json', f);
  const j = JSON.parse(fs.readFileSync(f, 'utf8'));
  assert.equal(j.layers.length, result.layers.length);
  assert.equal(j.layers[0].probs[0].length, result.n);
  assert.equal(j.tokens.length, result.n);
});

test('html export is one self-contained page', async () => {
  const f = path.join(dir, 'r.html');
  await writeExport(result, 'html', f);
  const h = fs.readFileSync(f, 'utf8');
  assert.match(h, /^<!DOCTYPE html>/);
  assert.match(h, /default-src 'none'/);
  assert.ok(!/src="http/.test(h));
});

test('png and svg write what the view sent, and refuse what it did not', async () => {
  const png = path.join(dir, 'v.png');
  await writeExport(result, 'png', png, { dataUrl: tinyPng() });
  assert.equal(fs.readFileSync(png).readUInt32BE(0), 0x89504e47);
  const svg = path.join(dir, 'v.svg');
  await writeExport(result, 'svg', svg, { svg: '<svg xmlns="http://www.w3.org/2000/svg"></svg>' });
  assert.match(fs.readFileSync(svg, 'utf8'), /^<svg/);
  await assert.rejects(writeExport(result, 'png', path.join(dir, 'x.png')), /no PNG image/);
  await assert.rejects(writeExport(result, 'svg', path.join(dir, 'x.svg'), { svg: 'hello' }), /no SVG image/);
  assert.throws(() => decodePngDataUrl('data:image/png;base64,aGVsbG8gd29ybGQ='), /not a PNG/);
  assert.throws(() => decodePngDataUrl('data:text/html,<b>'), /data:image\/png/);
  assert.ok(!fs.existsSync(path.join(dir, 'x.png')));
});

test('an unwritable target is a one-line LensError naming the file', async () => {
  const bad = path.join(dir, 'no-such-folder', 'r.npz');
  await assert.rejects(writeExport(result, 'npz', bad), (e: Error) => {
    assert.equal(e.name, 'LensError');
    assert.ok(e.message.includes(bad) && !e.message.includes('\n'), e.message);
    return true;
  });
});

test('default export names are file-system safe', () => {
  assert.equal(defaultExportName(result, 'png', 'ablation-L1-H2'), `v3_tiny-${result.n}tok-ablation-L1-H2.png`);
  assert.equal(defaultExportName(result, 'json', 'a/b c'), `v3_tiny-${result.n}tok-a-b-c.json`);
});
