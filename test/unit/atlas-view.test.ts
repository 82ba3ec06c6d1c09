// The host side of the atlas panel: a folder checked before a build (one line each for what cannot be read), the
// atlas file's place in storage, and an atlas JSON turned into what the panel shows (examples with their text).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AtlasJson } from '../../src/analysis/atlas/atlas';
import { atlasView, examplePlace, readAtlasFile } from '../../src/extension/atlas/atlas-file';
import { atlasOutPath, checkCorpusFolder } from '../../src/extension/atlas/build-place';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'atlas-view-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a folder is refused with one line: empty, no .txt/.md, not a folder', async () => {
  const empty = path.join(tmp, 'empty');
  fs.mkdirSync(empty);
  await assert.rejects(checkCorpusFolder(empty), { message: `${empty} is empty; put .txt or .md files in it, or pick another folder` });
  const code = path.join(tmp, 'code');
  fs.mkdirSync(path.join(code, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(code, 'a.ts'), 'x');
  fs.writeFileSync(path.join(code, 'sub', 'b.json'), '{}');
  await assert.rejects(checkCorpusFolder(code), /has no \.txt or \.md file \(subfolders searched too\)/);
  await assert.rejects(checkCorpusFolder(path.join(code, 'a.ts')), /is not a folder/);
  await assert.rejects(checkCorpusFolder(path.join(tmp, 'missing')), /cannot read it \(ENOENT\)/);
  fs.writeFileSync(path.join(code, 'sub', 'c.md'), 'text');
  await checkCorpusFolder(code);
});

test('the atlas file: in storage, one per model and folder, the same for the same pair', () => {
  const a = atlasOutPath('/store', '/models/m', '/work/my texts');
  assert.equal(path.dirname(a), path.join('/store', 'atlas'));
  assert.match(path.basename(a), /^my_texts-[0-9a-f]{16}\.json$/);
  assert.equal(atlasOutPath('/store', '/models/m', '/work/my texts/'), a);
  assert.notEqual(atlasOutPath('/store', '/models/other', '/work/my texts'), a);
});

test('an atlas JSON read for the panel: examples with their tokens and context; the paragraph around the query', () => {
  const corpus = path.join(tmp, 'corpus');
  fs.mkdirSync(corpus);
  const text = 'First paragraph here.\n\nThe cat sat on the mat.\n';
  fs.writeFileSync(path.join(corpus, 'a.txt'), text);
  const cat = text.indexOf('cat'),
    mat = text.indexOf('mat');
  const top = { file: 'a.txt', query: [cat, cat + 3] as [number, number], key: [mat, mat + 3] as [number, number], prob: 0.75 };
  const json = {
    model: { name: 'tiny', path: '/m', layers: 1, heads: 1 },
    corpus,
    texts: 2,
    tokens: 20,
    heads: [{ layer: 0, head: 0, metrics: { entropy: 1.5, c2c_share: 0.25, mean_distance: 2 }, top: [top], sums: {} }],
  } as unknown as AtlasJson;
  const file = path.join(tmp, 'atlas.json');
  fs.writeFileSync(file, JSON.stringify(json));
  const read = readAtlasFile(file);
  const view = atlasView(file, read);
  assert.equal(view.name, 'tiny · corpus');
  assert.deepEqual(view.rows[0]!.metrics, { c2c_share: 0.25, mean_distance: 2, entropy: 1.5 });
  const ex = view.rows[0]!.top[0]!;
  assert.deepEqual([ex.query, ex.key, ex.prob], ['cat', 'mat', 0.75]);
  assert.equal(ex.context, 'First paragraph here. The cat sat on the mat. ');
  const place = examplePlace(read, top);
  assert.deepEqual(place.paragraph, [text.indexOf('The'), text.length - 1]);
  assert.deepEqual(place.query, [cat, cat + 3]);
  fs.writeFileSync(path.join(corpus, 'a.txt'), 'short');
  assert.throws(() => examplePlace(read, top), /changed since the atlas was built/);
  fs.writeFileSync(file, '{"heads": 3}');
  assert.throws(() => readAtlasFile(file), /not an atlas/);
  fs.writeFileSync(file, 'nope');
  assert.throws(() => readAtlasFile(file), /not JSON/);
});
