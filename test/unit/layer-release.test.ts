// What a long input needs of the layer cache: a layer it lets go is freed promptly (not at V8's leisure), a
// prefetch computes one layer in the reading direction and only when it fits beside the layer in view, and the
// position projections the runtime keeps give the same numbers in a fresh runtime as in a warm one.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { LayerCache, layerCache, type LayerOwner } from '../../src/engine/memory/layer-cache';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import type { GraphName } from '../../src/engine/runtime/messages';
import { prefetchAround } from '../../src/extension/lens/request-dispatch';
import { FIXTURES, REPO_ROOT } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const DEFAULT = path.join(REPO_ROOT, 'models', 'default'); // 4 layers
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-release-'));
const cacheDir = path.join(tmp, 'cache');
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const nextTask = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Counts the runs of each graph the model's runtime is asked for. */
function countRuns(model: OpenModel): Map<GraphName, number> {
  const counts = new Map<GraphName, number>();
  const run = model.session.run.bind(model.session);
  model.session.run = (graph, ...rest) => {
    counts.set(graph, (counts.get(graph) ?? 0) + 1);
    return run(graph, ...rest);
  };
  return counts;
}

describe('layer cache: evicted layers are released promptly', () => {
  it('asks for one collection in the task after evicting enough bytes, none for less', async () => {
    let collections = 0;
    const cache = new LayerCache(100, { afterBytes: 50, collect: () => collections++ });
    const evicted: number[] = [];
    const owner: LayerOwner = { cacheId: 1, evict: (l) => evicted.push(l) };
    for (const l of [0, 1, 2, 3]) cache.add(owner, l, 30); // the fourth evicts layer 0: 30 bytes
    await nextTask();
    assert.equal(collections, 0, '30 evicted bytes are not worth a collection');
    cache.reserve(60); // evicts layers 1 and 2: 90 bytes since the last collection
    assert.deepEqual(evicted, [0, 1, 2]);
    assert.equal(collections, 0, 'not in the evicting task: the evicted layers are still weakly kept there');
    await nextTask();
    assert.equal(collections, 1, 'one collection for the burst');
    cache.add(owner, 4, 30);
    cache.released(owner.cacheId); // a released result's layers are garbage too: 60 bytes
    await nextTask();
    assert.equal(collections, 2, 'a release is collected as promptly');
    assert.equal(cache.bytes, 0);
  });

  it('an evicted layer nobody holds is gone before the next layer is computed (real engine, real collection)', async () => {
    const model = await openModel(V3, { cacheDir });
    const [limit, afterBytes] = [layerCache.limit, layerCache.collection.afterBytes];
    try {
      const r = await model.explain({ text: 'a few tokens to look at, one layer at a time' });
      layerCache.setLimit(1); // one layer at a time
      layerCache.collection.afterBytes = 0;
      const first = new WeakRef(await r.load(0));
      await r.load(1);
      assert.equal(first.deref(), undefined, 'layer 0 was collected once evicted');
      assert.equal(r.isLoaded(1), true);
    } finally {
      layerCache.setLimit(limit);
      layerCache.collection.afterBytes = afterBytes;
      await model.dispose();
    }
  });
});

describe('prefetch', () => {
  it('computes the next layer in the reading direction, one at a time', async () => {
    const model = await openModel(DEFAULT, { cacheDir });
    try {
      const r = await model.explain({ text: 'the reader steps through the layers of this sentence' });
      const runs = countRuns(model);
      const waitLoaded = async (l: number) => {
        for (let k = 0; k < 200 && !r.isLoaded(l); k++) await new Promise((res) => setTimeout(res, 25));
        assert.equal(r.isLoaded(l), true, `layer ${l} was prefetched`);
      };
      prefetchAround(r, 2); // first read: upwards
      await waitLoaded(3);
      prefetchAround(r, 1); // stepping down
      await waitLoaded(0);
      assert.equal(runs.get('layer'), 2, 'one layer per read, nothing the other way');
      assert.deepEqual([r.isLoaded(1), r.isLoaded(2)], [false, false]);
    } finally {
      await model.dispose();
    }
  });

  it('skips a layer that would not fit the cache beside the one in view', async () => {
    const model = await openModel(V3, { cacheDir });
    const limit = layerCache.limit;
    try {
      const r = await model.explain({ text: 'a layer as large as half the cache' });
      const runs = countRuns(model);
      layerCache.setLimit(2 * r.layerBytes - 1);
      await r.load(0);
      r.prefetch(1); // a prefetch that starts asks the runtime at once
      assert.equal(runs.get('layer'), 1, 'only the layer asked for was computed');
      layerCache.setLimit(2 * r.layerBytes);
      r.prefetch(1);
      await r.load(1);
      assert.equal(runs.get('layer'), 2, 'with room for two, the prefetch computed layer 1 (the request shared it)');
    } finally {
      layerCache.setLimit(limit);
      await model.dispose();
    }
  });
});

describe('position cache', () => {
  it('a fresh runtime derives the same position projections: the same numbers before and after a restart', async () => {
    const model = await openModel(V3, { cacheDir });
    try {
      // Derived while explaining one text, reused for a text of another length.
      await (await model.explain({ text: 'positions are projected once per layer and kept' })).load(0);
      const text = 'a longer text, read with the projections the runtime already holds from the first one';
      const warm = await (await model.explain({ text })).load(0);
      const kinds = ['c2c', 'c2p', 'p2c', 'probs'] as const;
      const before = kinds.map((k) => Float32Array.from(warm[k]!));
      await model.session.terminate(); // the next run starts a runtime that holds nothing
      const fresh = await (await model.explain({ text })).load(0);
      kinds.forEach((k, i) => assert.deepEqual(fresh[k], before[i], k));
    } finally {
      await model.dispose();
    }
  });
});
