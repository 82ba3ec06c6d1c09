// Must-change weight edits: one float32 weight of v3_tiny edited exactly as the fixture lists it, the checkpoint
// written in a seeded layout (safetensors, sharded safetensors, torch .bin stored or deflated, one storage, transposed
// views), explained through the run's shared cache. Every layer's attention must equal Hugging Face's numbers for
// that edit (weight_edits.json), and an edit that must change the output must not give the unedited one: a stale
// cache entry, a weight read from the wrong place or an edit ignored is a silent wrong.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeSafetensors, fromArray } from '../../../../tools/fixtures/write-safetensors';
import { writeTorchBin } from '../../../../tools/fixtures/write-torch-bin';
import type { Rng } from '../mutate';
import { explainArgs, type Family, V3, v3Folder } from './family';

export interface Edit {
  tensor: string;
  op: 'set' | 'add' | 'row_scale' | 'negate_row' | 'scale';
  index: number | null;
  value: number | null;
  must_change: boolean;
  probs?: number[][][][];
}

export interface EditFixture {
  input_ids: number[];
  base: number[][][][];
  edits: Edit[];
}

let fixture: EditFixture | undefined;
export function editFixture(): EditFixture {
  fixture ??= JSON.parse(fs.readFileSync(path.join(V3, 'weight_edits.json'), 'utf8')) as EditFixture;
  return fixture;
}

/** Agreement with Hugging Face's float64 numbers (float32 engine; the run saw 3.3e-6). */
const TOLERANCE = 2e-5;
/** An edit that must change the output moves some probability by more than this (the fixture's moves are ≥ 0.03). */
const MOVED = 1e-3;

function maxDiff(got: unknown, want: number[][][][]): number {
  const g = (got as number[][][][]).flat(3);
  const w = want.flat(3);
  if (g.length !== w.length) return Infinity;
  let d = 0;
  for (let k = 0; k < w.length; k++) {
    const a = g[k];
    if (typeof a !== 'number' || !Number.isFinite(a)) return Infinity;
    d = Math.max(d, Math.abs(a - w[k]!));
  }
  return d;
}

/** Checks explain's stdout: its input ids, and each layer's probs against `want` (and away from `base` if asked). */
export function probsCheck(ids: number[], want: number[][][][], base?: number[][][][]): (stdout: string) => string | undefined {
  return (stdout) => {
    let json: { input_ids: number[]; layers: { layer: number; probs: unknown }[] };
    try {
      json = JSON.parse(stdout);
    } catch {
      return 'stdout is not JSON';
    }
    if (json.input_ids.join(',') !== ids.join(',')) return `input_ids ${json.input_ids.join(',')}`;
    const got = json.layers.map((l) => l.probs);
    const d = maxDiff(got, want);
    if (!(d <= TOLERANCE)) return `probs differ from Hugging Face's by ${d.toExponential(2)}`;
    if (base && !(maxDiff(got, base) > MOVED)) return 'the edit did not change the output';
    return undefined;
  };
}

/** A copy of `bytes` (float32) with the edit applied, exactly as the fixture's generator applies it. */
export function applyEdit(bytes: Uint8Array, shape: number[], e: Edit): Float32Array {
  const v = new Float32Array(bytes.slice().buffer);
  const cols = shape.length === 2 ? shape[1]! : 1;
  const i = e.index ?? 0;
  const x = e.value ?? 0;
  if (e.op === 'set') v[i] = x;
  else if (e.op === 'add') v[i] = Math.fround(v[i]! + x);
  else if (e.op === 'scale') for (let k = 0; k < v.length; k++) v[k] = v[k]! * x;
  else for (let k = i * cols; k < (i + 1) * cols; k++) v[k] = e.op === 'negate_row' ? -v[k]! : v[k]! * x;
  return v;
}

export interface Weights {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** Writes `weights` into `model` in a seeded layout; returns its name. */
export function writeWeights(model: string, weights: Weights[], rng: Rng): string {
  fs.rmSync(path.join(model, 'model.safetensors'), { force: true });
  const layout = rng.pick(['safetensors', 'shards', 'bin', 'bin deflated', 'bin one storage', 'bin transposed'] as const);
  if (layout === 'safetensors')
    writeSafetensors(
      path.join(model, 'model.safetensors'),
      weights.map((w) => fromArray(w.name, w.shape, w.data)),
    );
  else if (layout === 'shards') {
    const cut = 1 + rng.int(weights.length - 1);
    const parts = [weights.slice(0, cut), weights.slice(cut)];
    const map: Record<string, string> = {};
    parts.forEach((part, k) => {
      const file = `model-0000${k + 1}-of-00002.safetensors`;
      writeSafetensors(
        path.join(model, file),
        part.map((w) => fromArray(w.name, w.shape, w.data)),
      );
      for (const w of part) map[w.name] = file;
    });
    fs.writeFileSync(path.join(model, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: map }));
  } else {
    const tensors = new Map(weights.map((w) => [w.name, { shape: w.shape, data: w.data }]));
    const transposed = new Set(weights.filter((w) => w.shape.length === 2 && rng.chance(0.5)).map((w) => w.name));
    writeTorchBin(path.join(model, 'pytorch_model.bin'), tensors, {
      deflate: layout === 'bin deflated',
      singleStorage: layout === 'bin one storage',
      transposed: layout === 'bin transposed' ? transposed : undefined,
    });
  }
  return layout;
}

export const weightEdits: Family = {
  name: 'must-change weight edits',
  make({ rng, dir, cache, bases }) {
    const fx = editFixture();
    const edit = rng.pick(fx.edits);
    const model = v3Folder(path.join(dir, 'model'), false);
    const weights = bases.v3Tensors.map((t) => ({
      name: t.name,
      shape: t.shape,
      data: t.name === edit.tensor ? applyEdit(t.bytes, t.shape, edit) : new Float32Array(t.bytes.slice().buffer),
    }));
    if (!weights.some((w) => w.name === edit.tensor)) throw new Error(`weight_edits.json names ${edit.tensor}, which v3_tiny lacks`);
    const layout = writeWeights(model, weights, rng);
    const want = edit.must_change ? edit.probs! : fx.base;
    return {
      what: `${edit.tensor} ${edit.op} ${edit.index ?? ''} ${edit.value ?? ''} (${layout})`,
      args: explainArgs(model, cache, '--ids', fx.input_ids.join(',')),
      expect: 'result',
      check: probsCheck(fx.input_ids, want, edit.must_change ? fx.base : undefined),
    };
  },
};
