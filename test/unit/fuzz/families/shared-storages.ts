// Shared storages: torch .bin files whose tensors are views of one storage. Legitimate layouts (every weight in one
// buffer, tied names viewing the same bytes, transposed views) must load and give Hugging Face's numbers; many
// distinct views of one large deflated storage must be refused before they are copied; views that reach past their
// storage must be refused; views that overlap another weight give some other model, which must still come out
// well-formed.
import * as path from 'node:path';
import { PickleWriter, writeZip } from '../../../../tools/fixtures/write-torch-bin';
import type { Rng } from '../mutate';
import type { FuzzCase } from '../judge';
import { explainArgs, type Family, type MakeContext, v3Folder } from './family';
import { editFixture, probsCheck, writeWeights } from './weight-edits';

interface View {
  name: string;
  offset: number;
  shape: number[];
  stride: number[];
}

/** A .bin whose views all read storage 0 (`numel` float32, deflated or not). */
function writeViews(file: string, storage: Uint8Array, views: View[], deflate: boolean): void {
  const p = new PickleWriter();
  p.proto();
  p.op(0x7d);
  p.put();
  p.mark();
  for (const v of views) {
    p.unicode(v.name);
    p.rebuildTensor('FloatStorage', '0', storage.length / 4, v.offset, v.shape, v.stride);
  }
  p.op(0x75);
  p.op(0x2e);
  writeZip(
    file,
    [
      { name: 'archive/data.pkl', data: p.bytes() },
      { name: 'archive/data/0', data: storage, deflate },
    ],
    false,
  );
}

const strides = (shape: number[]) => (shape.length === 2 ? [shape[1]!, 1] : [1]);

/** Every v3 weight packed into one buffer, each a view at its own offset; returns the buffer and the views. */
function packed(ctx: MakeContext): { storage: Uint8Array; views: View[] } {
  const total = ctx.bases.v3Tensors.reduce((a, t) => a + t.bytes.length, 0);
  const storage = new Uint8Array(total);
  const views: View[] = [];
  let at = 0;
  for (const t of ctx.bases.v3Tensors) {
    storage.set(t.bytes, at);
    views.push({ name: t.name, offset: at / 4, shape: t.shape, stride: strides(t.shape) });
    at += t.bytes.length;
  }
  return { storage, views };
}

function variant(ctx: MakeContext, model: string, rng: Rng): FuzzCase {
  const fx = editFixture();
  const file = path.join(model, 'pytorch_model.bin');
  const ids = ['--ids', fx.input_ids.join(',')];
  const base = { args: explainArgs(model, ctx.cache, ...ids), check: probsCheck(fx.input_ids, fx.base) };
  switch (rng.int(5)) {
    case 0: {
      const weights = ctx.bases.v3Tensors.map((t) => ({ name: t.name, shape: t.shape, data: new Float32Array(t.bytes.slice().buffer) }));
      const layout = writeWeights(model, weights, rng);
      return { ...base, what: `v3_tiny as ${layout}`, expect: 'result' };
    }
    case 1: {
      // Tied names: extra names viewing the same bytes as a real weight (as tie_weights saves them).
      const { storage, views } = packed(ctx);
      const n = rng.pick([1, 10, 1000]);
      for (let k = 0; k < n; k++) {
        const v = rng.pick(views.slice(0, ctx.bases.v3Tensors.length));
        views.push({ ...v, name: `tied.${k}.${v.name}` });
      }
      writeViews(file, storage, views, rng.chance(0.5));
      return { ...base, what: `one storage, ${n} tied names`, expect: 'result' };
    }
    case 2: {
      const { storage, views } = packed(ctx);
      const numel = rng.pick([2 ** 20, 4 * 2 ** 20, 8 * 2 ** 20]);
      const big = new Uint8Array(numel * 4);
      big.set(storage);
      const n = rng.pick([50, 300, 870, 3000]);
      for (let k = 0; k < n; k++) views.push({ name: `encoder.extra.${k}.weight`, offset: 1 + k, shape: [numel - 4096], stride: [1] });
      writeViews(file, big, views, true);
      // Refused, or (views of names the model never reads) left uncopied: never gigabytes of copies.
      return { ...base, what: `${n} distinct views of a deflated ${numel}-element storage`, expect: 'either', names: /pytorch_model\.bin/ };
    }
    case 3: {
      const { storage, views } = packed(ctx);
      const v = rng.pick(views);
      const numel = storage.length / 4;
      const lie = rng.pick([numel, numel - 1, 2 ** 31, 2 ** 40]);
      if (rng.chance(0.5)) v.offset = lie;
      else {
        // Rows enough to pass the storage's end from where the view starts.
        const cols = v.shape.length === 2 ? v.shape[1]! : 1;
        const rows = Math.ceil((numel - v.offset) / cols) + rng.pick([1, 1000]);
        v.shape = v.shape.length === 2 ? [rows, cols] : [rows];
      }
      writeViews(file, storage, views, rng.chance(0.5));
      return {
        ...base,
        what: `${v.name} reaches past its storage (offset ${v.offset}, shape [${v.shape.join(',')}])`,
        expect: 'error',
        names: /pytorch_model\.bin/,
      };
    }
    default: {
      // One weight's view moved onto another's bytes (same shape, other offset): a different, valid model.
      const { storage, views } = packed(ctx);
      const a = rng.pick(views);
      const same = views.filter((v) => v !== a && v.shape.join() === a.shape.join());
      const b = same.length > 0 ? rng.pick(same) : a;
      a.offset = b.offset;
      writeViews(file, storage, views, rng.chance(0.5));
      return { args: base.args, what: `${a.name} views ${b.name}'s bytes`, expect: 'either' };
    }
  }
}

export const sharedStorages: Family = {
  name: 'shared storages',
  make(ctx) {
    const model = v3Folder(path.join(ctx.dir, 'model'), false);
    return variant(ctx, model, ctx.rng);
  },
};
