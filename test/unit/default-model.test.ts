// The demo model shipped in models/default: loads through the same engine path as any checkpoint, explains a
// sentence with sane numbers, and stays within the extension's size budget.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { inspectModel, openModel, resolveModelDir } from '../../src/engine/model/open-model';
import { REPO_ROOT, at } from './helpers';

const DIR = path.join(REPO_ROOT, 'models', 'default');
const BUDGET_BYTES = 25 * 1024 * 1024;
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-default-'));
after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

describe('the bundled default model', () => {
  it('is what --model default resolves to, a DeBERTa-v3 layout with its own spm.model', async () => {
    assert.equal(resolveModelDir('default'), DIR);
    const s = await inspectModel('default');
    assert.equal(s.type, 'deberta-v2');
    assert.equal(s.tokenizer, 'spm');
    assert.equal(s.is_default, true);
    assert.deepEqual(s.terms, ['c2c', 'c2p', 'p2c']);
    assert.ok(s.position_buckets > 0, 'log buckets');
    for (const f of ['config.json', 'model.safetensors', 'spm.model', 'tokenizer_config.json', 'MODEL_CARD.md']) {
      assert.ok(fs.existsSync(path.join(DIR, f)), `${f} is shipped`);
    }
  });

  it(`stays within the ${BUDGET_BYTES / 2 ** 20} MB budget`, () => {
    let total = 0;
    for (const f of fs.readdirSync(DIR, { recursive: true }) as string[]) {
      const st = fs.statSync(path.join(DIR, f));
      if (st.isFile()) total += st.size;
    }
    assert.ok(total <= BUDGET_BYTES, `models/default is ${(total / 2 ** 20).toFixed(1)} MB`);
  });

  it('explains a sentence: [H, n, n] terms, finite values, every probs row sums to 1', async () => {
    const model = await openModel('default', { cacheDir });
    try {
      const text = 'The model reads the sentence, and every head attends somewhere.';
      const r = await model.explain({ text });
      assert.equal(at(r.tokens, 0).special, true);
      assert.equal(r.tokens.at(-1)!.special, true);
      assert.equal(r.layers.length, model.info.layers);
      const n = r.n,
        H = model.info.heads;
      for (const l of r.layers) {
        await r.load(l);
        for (const kind of ['c2c', 'c2p', 'p2c', 'probs'] as const) {
          const t = r.tensor(l, kind);
          assert.equal(t.length, H * n * n, `${kind} shape`);
          assert.ok(t.every(Number.isFinite), `layer ${l} ${kind} finite`);
        }
        const p = r.tensor(l, 'probs');
        for (let row = 0; row < H * n; row++) {
          const sum = p.subarray(row * n, (row + 1) * n).reduce((a, b) => a + b, 0);
          assert.ok(Math.abs(sum - 1) < 1e-5, `layer ${l} row ${row} sums to ${sum}`);
        }
      }
      // Offsets point back into the text.
      for (const t of r.tokens.filter((t) => !t.special)) assert.ok(t.start >= 0 && t.end <= text.length && t.start <= t.end);
    } finally {
      await model.dispose();
    }
  });
});
