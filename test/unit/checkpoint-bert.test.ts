// BERT checkpoints: config.json of model_type "bert" in the ModelSpec (BertConfig's defaults, refusals by name),
// and weights under Hugging Face's task-class layouts (BertForMaskedLM with the decoder tied or stored,
// BertForPreTraining's pooler and next-sentence head, TensorFlow-converted gamma/beta names) in .bin and safetensors.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { writeTorchBin, type TorchTensor } from '../../tools/fixtures/write-torch-bin';
import { loadCheckpoint, parseConfig, requireWeight } from '../../src/engine/checkpoint';
import { isLensError } from '../../src/engine/errors';
import { encoderParameters, inspectModel } from '../../src/engine/model/open-model';
import { f32, rejectsLens, tempDir } from './checkpoint-test-utils';
import { FIXTURES } from './helpers';

const BERT_TINY = path.join(FIXTURES, 'bert', 'bert_tiny');
const FILE = '/models/b/config.json';

function refused(json: object, ...parts: string[]): void {
  assert.throws(
    () => parseConfig(json, FILE),
    (e: unknown) => {
      assert.ok(isLensError(e), String(e));
      assert.equal(e.code, 'unsupported', e.message);
      for (const p of [FILE, ...parts]) assert.ok(e.message.includes(p), `message lacks ${p}: ${e.message}`);
      return true;
    },
  );
}

test('bert_tiny config.json → ModelSpec: BERT in DeBERTa terms (absolute positions, no relative terms, scale sqrt(d))', () => {
  const s = parseConfig(JSON.parse(fs.readFileSync(path.join(BERT_TINY, 'config.json'), 'utf8')), FILE);
  assert.equal(s.modelType, 'bert');
  assert.equal(s.architecture, 'bert');
  assert.deepEqual(
    [s.vocabSize, s.hiddenSize, s.embeddingSize, s.numLayers, s.numHeads, s.headDim, s.allHeadSize, s.intermediateSize],
    [198, 32, 32, 2, 4, 8, 32, 64],
  );
  assert.deepEqual([s.hiddenAct, s.layerNormEps, s.maxPositionEmbeddings, s.typeVocabSize, s.padTokenId], ['gelu', 1e-12, 64, 2, 0]);
  assert.deepEqual(
    [s.positionBiasedInput, s.relativeAttention, s.posAttType, s.scaleFactor, s.positionBuckets, s.convKernelSize],
    [true, false, [], 1, 0, 0],
  );
});

test('BERT config: BertConfig defaults; embedding_size ignored; other DeBERTa keys do not leak in', () => {
  const s = parseConfig({ model_type: 'bert', embedding_size: 128, relative_attention: true, pos_att_type: 'c2p|p2c' }, FILE);
  assert.deepEqual(
    [s.vocabSize, s.hiddenSize, s.embeddingSize, s.numLayers, s.numHeads, s.headDim, s.intermediateSize],
    [30522, 768, 768, 12, 12, 64, 3072],
  );
  assert.deepEqual([s.hiddenAct, s.layerNormEps, s.maxPositionEmbeddings, s.typeVocabSize], ['gelu', 1e-12, 512, 2]);
  assert.deepEqual([s.relativeAttention, s.posAttType, s.scaleFactor], [false, [], 1]);
  assert.equal(parseConfig({ model_type: 'bert', hidden_act: 'gelu_new' }, FILE).hiddenAct, 'gelu_new');
  assert.equal(parseConfig({ model_type: 'bert', position_embedding_type: null }, FILE).architecture, 'bert');
});

test('BERT config: relative position variants, decoders and bad sizes are refused by name', () => {
  refused({ model_type: 'bert', position_embedding_type: 'relative_key' }, 'position_embedding_type', 'relative_key', '"absolute"');
  refused({ model_type: 'bert', position_embedding_type: 'relative_key_query' }, 'relative_key_query');
  refused({ model_type: 'bert', is_decoder: true }, 'is_decoder');
  refused({ model_type: 'bert', add_cross_attention: true }, 'add_cross_attention');
  refused({ model_type: 'bert', hidden_act: 'mish' }, 'hidden_act', 'mish');
  assert.throws(
    () => parseConfig({ model_type: 'bert', hidden_size: 30, num_attention_heads: 4 }, FILE),
    /hidden_size 30 is not a multiple of num_attention_heads 4/,
  );
  assert.throws(() => parseConfig({ model_type: 'bert', type_vocab_size: -1 }, FILE), /type_vocab_size/);
});

test('bert_tiny checkpoint: bert. prefix dropped, BertForMaskedLM head kept (decoder tied, absent), head not counted', async () => {
  const ck = await loadCheckpoint(BERT_TINY);
  assert.equal(ck.spec.architecture, 'bert');
  assert.deepEqual(requireWeight(ck, 'embeddings.word_embeddings.weight', [198, 32]).shape, [198, 32]);
  requireWeight(ck, 'embeddings.position_embeddings.weight', [64, 32]);
  requireWeight(ck, 'embeddings.token_type_embeddings.weight', [2, 32]);
  requireWeight(ck, 'embeddings.LayerNorm.weight', [32]);
  for (const l of [0, 1]) {
    for (const m of ['query', 'key', 'value']) requireWeight(ck, `encoder.layer.${l}.attention.self.${m}.weight`, [32, 32]);
    requireWeight(ck, `encoder.layer.${l}.attention.output.LayerNorm.bias`, [32]);
    requireWeight(ck, `encoder.layer.${l}.intermediate.dense.weight`, [64, 32]);
    requireWeight(ck, `encoder.layer.${l}.output.dense.weight`, [32, 64]);
  }
  requireWeight(ck, 'cls.predictions.transform.dense.weight', [32, 32]);
  requireWeight(ck, 'cls.predictions.bias', [198]);
  assert.ok(!ck.weights.has('cls.predictions.decoder.weight'));
  assert.ok([...ck.weights.keys()].every((n) => !n.startsWith('bert.')));
  // Embeddings (198+64+2)·32 + LN 64; per layer 4·(32·32+32) + 2·64 + (64·32+64) + (32·64+32) + 64.
  const perLayer = 4 * (32 * 32 + 32) + 2 * 64 + (64 * 32 + 64) + (32 * 64 + 32);
  assert.equal(encoderParameters(ck), (198 + 64 + 2) * 32 + 64 + 2 * perLayer);
});

/** A BertForPreTraining-style .bin as TensorFlow-converted hub checkpoints store it: LayerNorm gamma/beta,
 *  the decoder stored, pooler and next-sentence head present. */
function writePreTrainingBin(dir: string): Map<string, TorchTensor> {
  const tensors = new Map<string, TorchTensor>();
  let seed = 1;
  const t = (name: string, shape: number[]) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => (seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5);
    tensors.set(name, { shape, data });
  };
  t('bert.embeddings.word_embeddings.weight', [198, 32]);
  t('bert.embeddings.position_embeddings.weight', [64, 32]);
  t('bert.embeddings.token_type_embeddings.weight', [2, 32]);
  t('bert.embeddings.LayerNorm.gamma', [32]);
  t('bert.embeddings.LayerNorm.beta', [32]);
  for (const l of [0, 1]) {
    const p = `bert.encoder.layer.${l}`;
    for (const m of ['query', 'key', 'value']) {
      t(`${p}.attention.self.${m}.weight`, [32, 32]);
      t(`${p}.attention.self.${m}.bias`, [32]);
    }
    t(`${p}.attention.output.dense.weight`, [32, 32]);
    t(`${p}.attention.output.dense.bias`, [32]);
    t(`${p}.attention.output.LayerNorm.gamma`, [32]);
    t(`${p}.attention.output.LayerNorm.beta`, [32]);
    t(`${p}.intermediate.dense.weight`, [64, 32]);
    t(`${p}.intermediate.dense.bias`, [64]);
    t(`${p}.output.dense.weight`, [32, 64]);
    t(`${p}.output.dense.bias`, [32]);
    t(`${p}.output.LayerNorm.gamma`, [32]);
    t(`${p}.output.LayerNorm.beta`, [32]);
  }
  t('bert.pooler.dense.weight', [32, 32]);
  t('bert.pooler.dense.bias', [32]);
  t('cls.predictions.bias', [198]);
  t('cls.predictions.transform.dense.weight', [32, 32]);
  t('cls.predictions.transform.dense.bias', [32]);
  t('cls.predictions.transform.LayerNorm.gamma', [32]);
  t('cls.predictions.transform.LayerNorm.beta', [32]);
  t('cls.predictions.decoder.weight', [198, 32]);
  t('cls.seq_relationship.weight', [2, 32]);
  t('cls.seq_relationship.bias', [2]);
  fs.writeFileSync(path.join(dir, 'config.json'), fs.readFileSync(path.join(BERT_TINY, 'config.json')));
  writeTorchBin(path.join(dir, 'pytorch_model.bin'), tensors);
  return tensors;
}

test('BERT .bin with gamma/beta, stored decoder, pooler and seq_relationship: read as HF loads it', async () => {
  const dir = tempDir('bert-bin');
  const written = writePreTrainingBin(dir);
  const ck = await loadCheckpoint(dir);
  assert.deepEqual(f32(requireWeight(ck, 'embeddings.LayerNorm.weight', [32])), written.get('bert.embeddings.LayerNorm.gamma')!.data);
  assert.deepEqual(
    f32(requireWeight(ck, 'encoder.layer.1.output.LayerNorm.bias', [32])),
    written.get('bert.encoder.layer.1.output.LayerNorm.beta')!.data,
  );
  requireWeight(ck, 'cls.predictions.transform.LayerNorm.weight', [32]);
  requireWeight(ck, 'cls.predictions.decoder.weight', [198, 32]);
  requireWeight(ck, 'pooler.dense.weight', [32, 32]);
  requireWeight(ck, 'cls.seq_relationship.weight', [2, 32]);
  // Same encoder as bert_tiny's geometry: heads (pooler, cls.*) are not encoder parameters.
  assert.equal(encoderParameters(ck), encoderParameters(await loadCheckpoint(BERT_TINY)));
});

test('BERT: a name that collides once gamma is read as weight is refused', async () => {
  const dir = tempDir('bert-collide');
  writeTorchBin(
    path.join(dir, 'pytorch_model.bin'),
    new Map([
      ['bert.embeddings.LayerNorm.gamma', { shape: [2], data: new Float32Array(2) }],
      ['bert.embeddings.LayerNorm.weight', { shape: [2], data: new Float32Array(2) }],
    ]),
  );
  fs.writeFileSync(path.join(dir, 'config.json'), fs.readFileSync(path.join(BERT_TINY, 'config.json')));
  await rejectsLens(() => loadCheckpoint(dir), 'corrupt', 'embeddings.LayerNorm.gamma', 'embeddings.LayerNorm.weight');
});

test('BERT folder: info reads it (WordPiece tokenizer, architecture bert)', async () => {
  const summary = await inspectModel(BERT_TINY);
  assert.deepEqual(
    [summary.type, summary.architecture, summary.tokenizer, summary.layers, summary.heads],
    ['bert', 'bert', 'wordpiece', 2, 4],
  );
});

test('unknown model types in a folder: one line naming the type (roberta, electra)', async () => {
  for (const t of ['roberta', 'electra']) {
    const dir = tempDir(`type-${t}`);
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: t }));
    await rejectsLens(() => inspectModel(dir), 'unsupported', `model_type "${t}"`, path.join(dir, 'config.json'));
  }
});
