// BERT's layer-0 decomposition graph, run in onnxruntime on the bert_tiny fixture: the three embedding parts sum to
// Hugging Face's embedding output, and c2c/c2p/p2c/p2p/rest equal the fixture's (Hugging Face's weights, its
// formula) to 1e-4 relative; their sum equals Hugging Face's layer-0 scores.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as fs from 'node:fs';
import { test } from 'node:test';
import * as ort from 'onnxruntime-node';
import { loadCheckpoint, requireWeight } from '../../src/engine/checkpoint';
import {
  buildDecompositionGraph,
  DECOMPOSITION_TERMS,
  DecompositionInput,
  embeddingParts,
} from '../../src/engine/graph/bert-decomposition';
import { OPSET } from '../../src/engine/graph/deberta-graph';
import { GraphBuilder } from '../../src/engine/graph/graph-builder';
import { encodeModel, OnnxType } from '../../src/engine/graph/onnx-proto';
import { toFloat32 } from '../../src/engine/graph/float32';
import { FIXTURES, at, field } from './helpers';

const DIR = path.join(FIXTURES, 'bert', 'bert_tiny');
interface Case {
  name: string;
  input_ids: number[];
  token_type_ids: number[];
  expected: {
    layers: Array<{ scores: number[][][] }>;
    hidden_states: number[][][];
    layer0_decomposition: Record<string, number[][][]>;
  };
}
const cases = (): Case[] => JSON.parse(fs.readFileSync(path.join(DIR, 'expected_outputs.json'), 'utf8')).cases;

async function session(build: (g: GraphBuilder) => void): Promise<ort.InferenceSession> {
  const g = new GraphBuilder();
  build(g);
  return ort.InferenceSession.create(encodeModel(g.build('test'), OPSET, 'test'));
}

const rows = (m: Float32Array, D: number, idx: number[]) => {
  const out = new Float32Array(idx.length * D);
  idx.forEach((r, k) => out.set(m.subarray(r * D, (r + 1) * D), k * D));
  return out;
};
const f32 = (data: Float32Array, dims: number[]) => new ort.Tensor('float32', data, dims);

function maxRelErr(got: Float32Array, want: number[][][]): number {
  const flat = want.flat(2);
  const scale = Math.max(...flat.map(Math.abs));
  let worst = 0;
  flat.forEach((w, k) => {
    worst = Math.max(worst, Math.abs(at(got, k) - w) / Math.max(Math.abs(w), 1e-3 * scale));
  });
  return worst;
}

test('bert_tiny layer 0: embedding parts sum to HF embeddings; c2c/c2p/p2c/p2p/rest equal the fixture (≤1e-4 rel)', async () => {
  const ck = await loadCheckpoint(DIR);
  const s = ck.spec;
  const D = s.hiddenSize;
  const W = (name: string, shape: number[]) => toFloat32(requireWeight(ck, name, shape));
  const word = W('embeddings.word_embeddings.weight', [s.vocabSize, D]);
  const pos = W('embeddings.position_embeddings.weight', [s.maxPositionEmbeddings, D]);
  const type = W('embeddings.token_type_embeddings.weight', [s.typeVocabSize, D]);
  const parts = await session((g) => {
    const inp = (name: string, dims: (number | string)[]) => g.input(name, OnnxType.FLOAT, dims);
    const p = embeddingParts(
      g,
      inp('w', ['n', D]),
      inp('p', ['n', D]),
      inp('y', ['n', D]),
      inp('gamma', [D]),
      inp('beta', [D]),
      s.layerNormEps,
    );
    for (const [k, v] of Object.entries(p)) g.output(v, k, OnnxType.FLOAT, ['n', D]);
  });
  const decomposition = await session((g) => buildDecompositionGraph(g, s));
  for (const c of cases()) {
    const n = c.input_ids.length;
    const e = await parts.run({
      w: f32(rows(word, D, c.input_ids), [n, D]),
      p: f32(
        rows(
          pos,
          D,
          c.input_ids.map((_, i) => i),
        ),
        [n, D],
      ),
      y: f32(rows(type, D, c.token_type_ids), [n, D]),
      gamma: f32(W('embeddings.LayerNorm.weight', [D]), [D]),
      beta: f32(W('embeddings.LayerNorm.bias', [D]), [D]),
    });
    const part = (k: string) => field(e, k).data as Float32Array;
    const [content, position, rest] = [part('content'), part('position'), part('rest')];
    const sum = content.map((v, k) => v + at(position, k) + at(rest, k));
    assert.ok(maxRelErr(sum, [at(c.expected.hidden_states, 0)]) < 1e-4, `${c.name}: parts do not sum to HF's embedding output`);
    const out = await decomposition.run({
      [DecompositionInput.content]: f32(content, [n, D]),
      [DecompositionInput.position]: f32(position, [n, D]),
      [DecompositionInput.rest]: f32(rest, [n, D]),
      [DecompositionInput.wq]: f32(W('encoder.layer.0.attention.self.query.weight', [D, D]), [D, D]),
      [DecompositionInput.bq]: f32(W('encoder.layer.0.attention.self.query.bias', [D]), [D]),
      [DecompositionInput.wk]: f32(W('encoder.layer.0.attention.self.key.weight', [D, D]), [D, D]),
      [DecompositionInput.bk]: f32(W('encoder.layer.0.attention.self.key.bias', [D]), [D]),
    });
    const total = new Float32Array(s.numHeads * n * n);
    for (const t of DECOMPOSITION_TERMS) {
      const got = field(out, t).data as Float32Array;
      const err = maxRelErr(got, field(c.expected.layer0_decomposition, t));
      assert.ok(err <= 1e-4, `${c.name} ${t}: max rel error ${err}`);
      got.forEach((v, k) => {
        total[k] = at(total, k) + v;
      });
    }
    // The sum carries five float32 roundings of terms larger than it: compared absolutely, at 1e-4 of the largest score.
    const want = at(c.expected.layers, 0).scores.flat(2);
    const bound = 1e-4 * Math.max(...want.map(Math.abs));
    const sumErr = Math.max(...want.map((w, k) => Math.abs(at(total, k) - w)));
    assert.ok(sumErr <= bound, `${c.name}: the five terms do not sum to HF's layer-0 scores (${sumErr} > ${bound})`);
  }
});
