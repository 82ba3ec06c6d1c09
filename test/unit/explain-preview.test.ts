// The preview: one head of one layer computed in the explain's own runtime call, right after the forward pass, so
// the panel's first heatmap does not wait for a second call. It must be the same matrices the layer gives when
// computed on demand, leave the layer itself to be computed on demand, and be cancelled with the explain.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { firstSlice, firstViewAt } from '../../src/extension/lens/first-slice';
import { PICTURE_FROM_TOKENS } from '../../src/shared/heatmap-picture';
import { viewKinds } from '../../src/shared/kinds';
import { halfSlice } from '../../src/extension/lens/layer-requests';
import { answerRequest, prefetchAround } from '../../src/extension/lens/request-dispatch';
import type { RowResponse, SliceResponse } from '../../src/shared/protocol/lens';
import { FIXTURES, at, rejectsWith } from './helpers';

const V3 = path.join(FIXTURES, 'deberta', 'v3_tiny');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-preview-'));
const TEXT = 'the preview is one head of one layer, computed with the forward pass';
const KINDS = ['c2c', 'c2p', 'p2c', 'scores', 'probs'] as const;

/** Largest |a − b| over the largest |b|, for two matrices of one head. */
function relativeDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length, 'shape');
  let diff = 0,
    big = 0;
  for (let k = 0; k < a.length; k++) {
    const [x, y] = [at(a, k), at(b, k)];
    diff = Math.max(diff, Math.abs(x - y));
    big = Math.max(big, Math.abs(y));
  }
  return diff / Math.max(big, 1e-30);
}

describe('explain with a preview', () => {
  let model: OpenModel;
  before(async () => {
    model = await openModel(V3, { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 1, maxTokens: 4096 });
  });
  after(async () => {
    await model.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('holds the asked head of the asked layer, every term, equal to that layer computed on demand; the layer stays on demand', async () => {
    const r = await model.explain({ text: TEXT, preview: { layer: 1, head: 2 } });
    assert.deepEqual(r.previewAt, { layer: 1, head: 2, heads: 1 });
    assert.equal(r.isLoaded(1), false, 'the preview does not load its layer');
    assert.equal(typeof r.timings?.preview_ms, 'number');
    const preview = Object.fromEntries(KINDS.map((kind) => [kind, r.previewSlice(1, 2, kind)]));
    await r.load(1);
    for (const kind of KINDS) {
      const got = preview[kind];
      assert.ok(got, `the preview has ${kind}`);
      assert.equal(got.length, r.n * r.n);
      // One head alone or all heads at once: the same graph over a different head range.
      assert.ok(relativeDiff(got, r.slice(1, 2, kind)) <= 1e-6, `${kind}: ${relativeDiff(got, r.slice(1, 2, kind))}`);
    }
    assert.equal(r.previewSlice(1, 1, 'probs'), undefined, 'another head');
    assert.equal(r.previewSlice(0, 2, 'probs'), undefined, 'another layer');
    r.release();
    assert.equal(r.previewSlice(1, 2, 'probs'), undefined, 'released');
  });

  it('can hold a run of heads (fewer past the last head); the panel asks for the shown head and the next', async () => {
    const r = await model.explain({ text: TEXT, preview: { layer: 0, head: 1, heads: 2 } });
    assert.deepEqual(r.previewAt, { layer: 0, head: 1, heads: 2 });
    const preview = [1, 2].map((h) => KINDS.map((kind) => r.previewSlice(0, h, kind)));
    assert.equal(r.previewSlice(0, 0, 'probs'), undefined);
    assert.equal(r.previewSlice(0, 3, 'probs'), undefined);
    await r.load(0);
    for (const [k, h] of [1, 2].entries()) {
      KINDS.forEach((kind, j) => assert.ok(relativeDiff(at(preview, k)[j]!, r.slice(0, h, kind)) <= 1e-6, `head ${h} ${kind}`));
    }
    const last = await model.explain({ text: TEXT, preview: { layer: 0, head: 3, heads: 2 } });
    assert.deepEqual(last.previewAt, { layer: 0, head: 3, heads: 1 });
    await rejectsWith(
      model.explain({ text: TEXT, preview: { layer: 0, head: 0, heads: 0 } }),
      'invalid-input',
      /head count 0 is not a whole number ≥ 1/,
    );
  });

  it("answers the view's slices and rows of the preview's heads without computing the layer, as the layer would", async () => {
    const r = await model.explain({ text: TEXT, preview: { layer: 1, head: 0, heads: 2 } });
    const slice = (await answerRequest(r, { type: 'slice', layer: 1, head: 1, kind: 'c2p', precision: 'half' })) as SliceResponse;
    const row = (await answerRequest(r, { type: 'row', layer: 1, head: 0, i: 3 })) as RowResponse;
    assert.equal(r.isLoaded(1), false, 'no layer run for the preview heads');
    // What the panel does after each answer; the next layer is not fetched ahead of one not computed yet.
    const first = await model.explain({ text: TEXT, preview: { layer: 0, head: 0, heads: 2 } });
    await answerRequest(first, { type: 'slice', layer: 0, head: 1, kind: 'probs', precision: 'half' });
    prefetchAround(first, 0);
    await new Promise((res) => setTimeout(res, 300));
    assert.deepEqual([first.isLoaded(0), first.isLoaded(1)], [false, false], 'no neighbour computed before the layer itself');
    await answerRequest(r, { type: 'slice', layer: 1, head: 2, kind: 'c2p' });
    assert.equal(r.isLoaded(1), true, 'another head computes the layer');
    assert.deepEqual(slice, halfSlice(1, 1, 'c2p', r.n, r.slice(1, 1, 'c2p')));
    const again = (await answerRequest(r, { type: 'row', layer: 1, head: 0, i: 3 })) as RowResponse;
    assert.deepEqual(Object.keys(row.rows).sort(), Object.keys(again.rows).sort());
    for (const kind of Object.keys(again.rows) as (keyof RowResponse['rows'])[]) {
      assert.ok(relativeDiff(new Float32Array(row.rows[kind]!), new Float32Array(again.rows[kind]!)) <= 1e-6, `row ${kind}`);
    }
  });

  it('without one, explain runs as before: no preview, no preview time', async () => {
    const r = await model.explain({ text: TEXT });
    assert.equal(r.previewAt, undefined);
    assert.equal(r.previewSlice(0, 0, 'probs'), undefined);
    assert.equal(r.timings?.preview_ms, undefined);
  });

  it('refuses a preview of a layer not explained or of a head the model lacks, with one line', async () => {
    await rejectsWith(
      model.explain({ text: TEXT, layers: [0], preview: { layer: 1, head: 0 } }),
      'invalid-input',
      /preview's layer 1 is not among the layers explained \(0\)/,
    );
    await rejectsWith(
      model.explain({ text: TEXT, preview: { layer: 0, head: 4 } }),
      'invalid-input',
      /preview's head 4 does not exist: this model has heads 0…3/,
    );
  });

  it('is cancelled with its explain, and the next explain (with a preview) works', async () => {
    const ids = [1, ...Array.from({ length: 1998 }, (_, k) => 5 + (k % 150)), 2]; // a run of ~100 ms or more
    const ac = new AbortController();
    const run = model.explain({ ids, preview: { layer: 0, head: 0 } }, ac.signal);
    setTimeout(() => ac.abort(), 5);
    await rejectsWith(run, 'cancelled', /cancelled/);
    const r = await model.explain({ ids: [1, 9, 17, 2], preview: { layer: 0, head: 3 } });
    assert.equal(r.previewSlice(0, 3, 'probs')?.length, 16);
  });

  it("is the panel's first matrix: sent at once in half precision, without computing its layer", async () => {
    const defaults = { term: 'c2p' as const, view: 'heatmap' as const, colorScale: 'diverging' as const };
    const at = { layer: 1, head: 3, kind: 'probs' as const };
    // What the panel asks explain for is what firstSlice then looks for.
    const want = firstViewAt({ type: model.info.type, layers: [0, 1], heads: model.info.heads, terms: model.info.terms }, at, defaults);
    assert.deepEqual(want, at);
    const r = await model.explain({ text: TEXT, preview: { layer: want.layer, head: want.head } });
    const first = await firstSlice(r, at, defaults);
    assert.equal(r.isLoaded(1), false, 'answered from the preview');
    assert.deepEqual(first, halfSlice(1, 3, 'probs', r.n, r.previewSlice(1, 3, 'probs')!));
    // A view elsewhere than the preview: its layer is computed, as without a preview.
    const other = await firstSlice(r, { layer: 0, head: 1, kind: 'c2p' }, defaults);
    assert.deepEqual([other?.layer, other?.head, other?.kind], [0, 1, 'c2p']);
    assert.equal(r.isLoaded(0), true);
    assert.equal(
      firstViewAt({ type: model.info.type, layers: [0, 1], heads: 4, terms: model.info.terms }, at, { ...defaults, view: 'heads' }),
      undefined,
    );
    // Past 1,024 tokens the view asks for a picture of its own size: no half slice rides with the init.
    const ids = [1, ...Array.from({ length: PICTURE_FROM_TOKENS }, (_, k) => 5 + (k % 150)), 2];
    const long = await model.explain({ ids, preview: { layer: want.layer, head: want.head } });
    assert.ok(long.previewSlice(1, 3, 'probs'), 'the preview is there');
    assert.equal(await firstSlice(long, at, defaults), undefined);
  });

  it("guesses only matrices the view offers: BERT's pickers have scores and probs, so a c2c or c2p view falls back", () => {
    const defaults = { term: 'c2p' as const, view: 'heatmap' as const, colorScale: 'diverging' as const };
    const bert = { type: 'bert', layers: [0, 1], heads: 4, terms: [] };
    assert.deepEqual(viewKinds(bert), ['scores', 'probs']);
    assert.deepEqual(firstViewAt(bert, { layer: 1, head: 2, kind: 'c2c' }, defaults), { layer: 0, head: 0, kind: 'probs' });
    assert.deepEqual(firstViewAt(bert, { layer: 1, head: 2, kind: 'scores' }, defaults), { layer: 1, head: 2, kind: 'scores' });
    const deberta = { type: 'deberta-v2', layers: [0, 1], heads: 4, terms: ['c2p' as const] };
    assert.deepEqual(viewKinds(deberta), ['c2c', 'c2p', 'scores', 'probs']);
    assert.deepEqual(firstViewAt(deberta, { layer: 1, head: 2, kind: 'p2c' }, defaults), { layer: 0, head: 0, kind: 'c2p' });
  });
});
