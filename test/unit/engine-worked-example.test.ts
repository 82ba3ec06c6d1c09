// The textbook worked example of disentangled attention, run through the real engine (graph + onnxruntime) on a
// checkpoint with hand-set weights: two tokens A=[1,0], B=[0,1], identity projections, P(A|B)=[0.5,0.5] for the
// key side and P(B|A)=[−0.5,0.5] for the query side.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openModel, type OpenModel } from '../../src/engine/model/open-model';
import { fromArray, writeSafetensors } from '../../tools/fixtures/write-safetensors';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lens-worked-'));
const I2 = new Float32Array([1, 0, 0, 1]);
const Z2 = new Float32Array(2);

function writeExample(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'deberta-v2',
      vocab_size: 2,
      hidden_size: 2,
      num_hidden_layers: 1,
      num_attention_heads: 1,
      intermediate_size: 2,
      hidden_act: 'gelu',
      max_position_embeddings: 8,
      type_vocab_size: 0,
      layer_norm_eps: 1e-7,
      relative_attention: true,
      max_relative_positions: 2,
      position_buckets: -1,
      norm_rel_ebd: 'none',
      share_att_key: false,
      pos_att_type: 'p2c|c2p',
      position_biased_input: false,
    }),
  );
  // ι(i, j) = (i − j) + S with S = 2: the pair (A → B) = (0, 1) reads row 1.
  const rel = new Float32Array(8);
  rel.set([0.5, 0.5], 2);
  const p = 'encoder.layer.0';
  const t = [
    fromArray('embeddings.word_embeddings.weight', [2, 2], I2),
    // LayerNorm maps [1,0] → [1,−1]·(≈1); weight ½ and bias ½ bring it back to [1,0] (and [0,1] to [0,1]).
    fromArray('embeddings.LayerNorm.weight', [2], new Float32Array([0.5, 0.5])),
    fromArray('embeddings.LayerNorm.bias', [2], new Float32Array([0.5, 0.5])),
    ...['query_proj', 'key_proj', 'value_proj', 'pos_key_proj'].flatMap((n) => [
      fromArray(`${p}.attention.self.${n}.weight`, [2, 2], I2),
      fromArray(`${p}.attention.self.${n}.bias`, [2], Z2),
    ]),
    // The query-side position projection flips the first axis: PQ = [−0.5, 0.5] for the same row.
    fromArray(`${p}.attention.self.pos_query_proj.weight`, [2, 2], new Float32Array([-1, 0, 0, 1])),
    fromArray(`${p}.attention.self.pos_query_proj.bias`, [2], Z2),
    fromArray(`${p}.attention.output.dense.weight`, [2, 2], I2),
    fromArray(`${p}.attention.output.dense.bias`, [2], Z2),
    fromArray(`${p}.attention.output.LayerNorm.weight`, [2], new Float32Array([1, 1])),
    fromArray(`${p}.attention.output.LayerNorm.bias`, [2], Z2),
    fromArray(`${p}.intermediate.dense.weight`, [2, 2], new Float32Array(4)),
    fromArray(`${p}.intermediate.dense.bias`, [2], Z2),
    fromArray(`${p}.output.dense.weight`, [2, 2], new Float32Array(4)),
    fromArray(`${p}.output.dense.bias`, [2], Z2),
    fromArray(`${p}.output.LayerNorm.weight`, [2], new Float32Array([1, 1])),
    fromArray(`${p}.output.LayerNorm.bias`, [2], Z2),
    fromArray('encoder.rel_embeddings.weight', [4, 2], rel),
  ];
  writeSafetensors(path.join(dir, 'model.safetensors'), t);
}

describe('textbook worked example of disentangled attention', () => {
  let model: OpenModel;
  before(async () => {
    writeExample(path.join(tmp, 'example'));
    model = await openModel(path.join(tmp, 'example'), { cacheDir: path.join(tmp, 'cache'), executionProvider: 'cpu', threads: 1 });
  });
  after(async () => {
    await model.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('A attending to B: c2c 0, c2p 0.5, p2c 0.5, A_AB = 1.0; scaled 0.707 (1/√d) vs 0.408 (DeBERTa 1/√(3d))', async () => {
    const r = await model.explain({ ids: [0, 1] });
    await r.load(0);
    const at = (kind: 'c2c' | 'c2p' | 'p2c' | 'scores') => r.value(0, 0, kind, 0, 1);
    const close = (x: number, want: number, what: string) => assert.ok(Math.abs(x - want) < 1e-5, `${what}: ${x} ≠ ${want}`);
    close(at('c2c'), 0, 'c2c (q_A · k_B)');
    close(at('c2p'), 0.5, 'c2p (q_A · P(A|B))');
    close(at('p2c'), 0.5, 'p2c (k_B · P(B|A))');
    const A_AB = at('c2c') + at('c2p') + at('p2c');
    close(A_AB, 1.0, 'A_AB');
    const d = 2;
    close(A_AB / Math.sqrt(d), 0.7071068, 'textbook scale 1/√d');
    close(r.scale, Math.sqrt(3 * d), 'DeBERTa scale √(3d)');
    close(at('scores'), 0.4082483, 'DeBERTa scaled score (what the softmax sees)');
    // The softmax row of A over {A, B}: scores are A_AA/√6 and A_AB/√6.
    const sAA = r.value(0, 0, 'scores', 0, 0);
    close(r.value(0, 0, 'probs', 0, 1), Math.exp(0.4082483) / (Math.exp(sAA) + Math.exp(0.4082483)), 'prob A→B');
  });
});
