import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseConfig } from '../../src/engine/checkpoint';
import { isLensError, type LensErrorCode } from '../../src/engine/errors';
import type { ModelSpec } from '../../src/engine/types';

const FILE = '/models/x/config.json';

function expectError(json: unknown, code: LensErrorCode, ...parts: string[]): void {
  assert.throws(
    () => parseConfig(json, FILE),
    (e: unknown) => {
      assert.ok(isLensError(e), `not a LensError: ${String(e)}`);
      assert.equal(e.code, code, e.message);
      assert.ok(e.message.includes(FILE), `message does not name the file: ${e.message}`);
      for (const p of parts) assert.ok(e.message.includes(p), `message lacks ${JSON.stringify(p)}: ${e.message}`);
      assert.ok(!e.message.includes('\n'), 'message must be one line');
      return true;
    },
  );
}

const v2 = (extra: Record<string, unknown> = {}): ModelSpec => parseConfig({ model_type: 'deberta-v2', ...extra }, FILE);
const v1 = (extra: Record<string, unknown> = {}): ModelSpec => parseConfig({ model_type: 'deberta', ...extra }, FILE);

test('class defaults follow HF DebertaV2Config / DebertaConfig (deberta-spec §2)', () => {
  const s = v2();
  assert.equal(s.modelType, 'deberta-v2');
  assert.deepEqual(
    [s.vocabSize, s.hiddenSize, s.numLayers, s.numHeads, s.headDim, s.allHeadSize, s.intermediateSize, s.embeddingSize],
    [128100, 1536, 24, 24, 64, 1536, 6144, 1536],
  );
  assert.equal(s.layerNormEps, 1e-7);
  assert.equal(s.positionBiasedInput, true);
  assert.equal(s.relativeAttention, false);
  assert.equal(s.maxPositionEmbeddings, 512);
  assert.equal(s.maxRelativePositions, 512); // -1 → P
  assert.equal(s.positionBuckets, 0);
  assert.equal(s.attSpan, 512);
  assert.deepEqual(s.posAttType, []);
  assert.equal(s.scaleFactor, 1);
  assert.equal(s.typeVocabSize, 0);
  assert.equal(s.hiddenAct, 'gelu');
  assert.equal(s.shareAttKey, false);
  assert.equal(s.normRelEbd, false);
  assert.deepEqual([s.convKernelSize, s.convGroups, s.convAct], [0, 1, 'tanh']);
  assert.equal(s.padTokenId, 0);
  const o = v1();
  assert.deepEqual([o.vocabSize, o.hiddenSize, o.numLayers, o.numHeads, o.headDim, o.intermediateSize], [50265, 768, 12, 12, 64, 3072]);
});

test('pos_att_type: string is lower-cased, split on | and stripped; list taken as is', () => {
  const s = v2({ relative_attention: true, pos_att_type: ' P2C | c2p ' });
  assert.deepEqual([...s.posAttType].sort(), ['c2p', 'p2c']);
  assert.equal(s.scaleFactor, 3);
  const only = v2({ relative_attention: true, pos_att_type: ['c2p'] });
  assert.deepEqual(only.posAttType, ['c2p']);
  assert.equal(only.scaleFactor, 2);
  // HF does not lower-case list entries: "C2P" in a list is no term at all.
  assert.deepEqual(v2({ relative_attention: true, pos_att_type: ['C2P'] }).posAttType, []);
  assert.equal(v2({ relative_attention: true, pos_att_type: null }).scaleFactor, 1);
  expectError({ model_type: 'deberta-v2', pos_att_type: 3 }, 'invalid-input', 'pos_att_type');
});

test('scale factor: v1 counts every entry, v2 only c2p/p2c; both count without relative attention', () => {
  assert.equal(v1({ relative_attention: true, pos_att_type: 'c2p|p2c|p2p' }).scaleFactor, 4);
  assert.equal(v2({ relative_attention: true, pos_att_type: 'c2p|p2c|p2p' }).scaleFactor, 3);
  const norel = v2({ relative_attention: false, pos_att_type: 'p2c|c2p' });
  assert.equal(norel.scaleFactor, 3);
  assert.deepEqual(norel.posAttType, []); // the terms do not exist
});

test('relative span: max_relative_positions, position_buckets (v2 only)', () => {
  const v3 = v2({ relative_attention: true, max_relative_positions: -1, position_buckets: 256 });
  assert.deepEqual([v3.maxRelativePositions, v3.positionBuckets, v3.attSpan], [512, 256, 256]);
  const plain = v2({ relative_attention: true, max_relative_positions: 128, position_buckets: -1 });
  assert.deepEqual([plain.maxRelativePositions, plain.positionBuckets, plain.attSpan], [128, 0, 128]);
  const old = v1({ relative_attention: true, max_relative_positions: 0, position_buckets: 256, max_position_embeddings: 40 });
  assert.deepEqual([old.maxRelativePositions, old.positionBuckets, old.attSpan], [40, 0, 40]);
  expectError(
    { model_type: 'deberta-v2', relative_attention: true, max_relative_positions: 8, position_buckets: 16 },
    'invalid-input',
    'position_buckets',
  );
});

test('attention_head_size overrides d in v2 only; D % H is still required', () => {
  const s = v2({ hidden_size: 768, num_attention_heads: 12, attention_head_size: 32 });
  assert.deepEqual([s.headDim, s.allHeadSize], [32, 384]);
  const o = v1({ hidden_size: 768, num_attention_heads: 12, attention_head_size: 32 });
  assert.deepEqual([o.headDim, o.allHeadSize], [64, 768]);
  expectError(
    { model_type: 'deberta-v2', hidden_size: 100, num_attention_heads: 12, attention_head_size: 64 },
    'invalid-input',
    'hidden_size',
    'num_attention_heads',
  );
});

test('v2-only fields are ignored by v1; embedding_size defaults to hidden_size', () => {
  const o = v1({ share_att_key: true, norm_rel_ebd: 'layer_norm', conv_kernel_size: 3, conv_act: 'gelu' });
  assert.deepEqual([o.shareAttKey, o.normRelEbd, o.convKernelSize, o.convAct], [false, false, 0, 'tanh']);
  const s = v2({ share_att_key: true, norm_rel_ebd: 'Layer_Norm|none', conv_kernel_size: 3, conv_act: 'gelu', conv_groups: 2 });
  assert.deepEqual([s.shareAttKey, s.normRelEbd, s.convKernelSize, s.convAct, s.convGroups], [true, true, 3, 'gelu', 2]);
  assert.equal(v2({ hidden_size: 48, num_attention_heads: 4, embedding_size: 16 }).embeddingSize, 16);
  assert.equal(v2({ embedding_size: null }).embeddingSize, 1536);
  expectError({ model_type: 'deberta-v2', conv_kernel_size: 4 }, 'unsupported', 'conv_kernel_size');
  expectError({ model_type: 'deberta-v2', conv_kernel_size: 3, conv_groups: 5 }, 'invalid-input', 'conv_groups');
});

test("activations: HF aliases map to the graph's functions; unknown ones are refused", () => {
  assert.equal(v2({ hidden_act: 'swish' }).hiddenAct, 'silu');
  assert.equal(v2({ hidden_act: 'gelu_pytorch_tanh' }).hiddenAct, 'gelu_new');
  assert.equal(v2({ hidden_act: 'gelu_new' }).hiddenAct, 'gelu_new');
  assert.equal(v2({ hidden_act: 'relu' }).hiddenAct, 'relu');
  expectError({ model_type: 'deberta-v2', hidden_act: 'mish' }, 'unsupported', 'hidden_act', 'mish');
  expectError({ model_type: 'deberta-v2', conv_act: 'mish', conv_kernel_size: 3 }, 'unsupported', 'conv_act');
});

test('talking_head is refused for v1', () => {
  expectError({ model_type: 'deberta', talking_head: true }, 'unsupported', 'talking_head');
  assert.equal(v1({ talking_head: false }).modelType, 'deberta');
});

test('model_type must be deberta, deberta-v2 or bert; any other is named in one line with the ones read', () => {
  for (const t of ['roberta', 'electra', 'xlm-roberta', 'distilbert', 'deberta-v3']) {
    expectError({ model_type: t }, 'unsupported', `model_type "${t}"`, '"deberta"', '"deberta-v2"', '"bert"');
  }
  expectError({ hidden_size: 8 }, 'unsupported', 'has no model_type');
  expectError([1, 2], 'corrupt');
  expectError('{"model_type": "deberta"}', 'corrupt');
});

test('numbers are validated with the field named', () => {
  expectError({ model_type: 'deberta-v2', hidden_size: '768' }, 'invalid-input', 'hidden_size');
  expectError({ model_type: 'deberta-v2', num_hidden_layers: 0 }, 'invalid-input', 'num_hidden_layers');
  expectError({ model_type: 'deberta-v2', num_attention_heads: 2.5 }, 'invalid-input', 'num_attention_heads');
  expectError({ model_type: 'deberta-v2', layer_norm_eps: 0 }, 'invalid-input', 'layer_norm_eps');
  expectError({ model_type: 'deberta-v2', vocab_size: -5 }, 'invalid-input', 'vocab_size');
  expectError({ model_type: 'deberta-v2', type_vocab_size: -1 }, 'invalid-input', 'type_vocab_size');
  expectError({ model_type: 'deberta-v2', relative_attention: 'yes' }, 'invalid-input', 'relative_attention');
  expectError({ model_type: 'deberta-v2', attention_head_size: 0 }, 'invalid-input', 'attention_head_size');
  // null is "not set", as HF writes it
  assert.equal(v2({ layer_norm_eps: null, position_buckets: null }).layerNormEps, 1e-7);
});
