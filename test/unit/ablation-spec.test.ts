import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { keepMasks, modelTerms, parseAblation } from '../../src/engine/run/ablation-spec';
import { parseConfig } from '../../src/engine/checkpoint';
import { FIXTURES } from './helpers';

const specOf = (name: string) => {
  const file = path.join(FIXTURES, 'deberta', name, 'config.json');
  return parseConfig(JSON.parse(fs.readFileSync(file, 'utf8')), file);
};

describe('ablation spec', () => {
  const v3 = specOf('v3_tiny'); // 2 layers × 4 heads, c2p and p2c
  it('reads layer.head:term entries, * heads and all terms, merged per layer, from the first layer on', () => {
    const plan = parseAblation('1.0:c2p, 0.*:p2c,1.3:all,1.0:c2p', v3);
    assert.equal(plan.firstLayer, 0);
    assert.deepEqual([...plan.layers.keys()], [0, 1]);
    assert.deepEqual(plan.layers.get(0), { p2c: [0, 1, 2, 3] });
    assert.deepEqual(plan.layers.get(1), { c2p: [0, 3], c2c: [3], p2c: [3] });
    assert.deepEqual(plan.entries, ['1.0:c2p', '0.*:p2c', '1.3:all', '1.0:c2p']);
    const k = keepMasks(plan, 1, v3);
    assert.deepEqual([...k.c2p], [0, 1, 1, 0]);
    assert.deepEqual([...k.c2c], [1, 1, 1, 0]);
    assert.deepEqual([...keepMasks(plan, 0, v3).c2c], [1, 1, 1, 1]);
  });

  it('one clear message each: a layer or head that does not exist, a term the model lacks, a malformed entry', () => {
    assert.throws(() => parseAblation('2.0:c2p', v3), /layer 2 does not exist; this model has layers 0…1/);
    assert.throws(() => parseAblation('1.4:c2p', v3), /head 4 does not exist; this model has heads 0…3/);
    assert.throws(() => parseAblation('1.0:p2p', v3), /"1\.0:p2p" is not LAYER\.HEAD:TERM/);
    assert.throws(() => parseAblation('', v3), /--ablate is empty/);
    const c2pOnly = { ...v3, posAttType: ['c2p' as const] };
    assert.deepEqual(modelTerms(c2pOnly), ['c2c', 'c2p']);
    assert.throws(() => parseAblation('0.1:p2c', c2pOnly), /this model has no p2c term \(its terms: c2c, c2p\)/);
    assert.deepEqual(parseAblation('0.1:all', c2pOnly).layers.get(0), { c2c: [1], c2p: [1] });
  });
});
