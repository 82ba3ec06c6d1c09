// Random-weight checkpoints of the real DeBERTa-v3 geometries, written at bench time (never committed).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SafetensorsTensorSpec, writeSafetensors } from '../fixtures/write-safetensors';

export interface Geometry {
  name: string;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
}

/** microsoft/deberta-v3-{xsmall,small,base,large}: vocab 128100, 256 log buckets, max relative 512. */
export const V3_GEOMETRIES: Record<string, Geometry> = {
  'v3-xsmall': { name: 'v3-xsmall', hidden: 384, layers: 12, heads: 6, intermediate: 1536 },
  'v3-small': { name: 'v3-small', hidden: 768, layers: 6, heads: 12, intermediate: 3072 },
  'v3-base': { name: 'v3-base', hidden: 768, layers: 12, heads: 12, intermediate: 3072 },
  'v3-large': { name: 'v3-large', hidden: 1024, layers: 24, heads: 16, intermediate: 4096 },
};
const DEFAULT_VOCAB = 128100;
const BUCKETS = 256;

export function v3Config(g: Geometry, vocab = DEFAULT_VOCAB): Record<string, unknown> {
  return {
    model_type: 'deberta-v2',
    vocab_size: vocab,
    hidden_size: g.hidden,
    num_hidden_layers: g.layers,
    num_attention_heads: g.heads,
    intermediate_size: g.intermediate,
    hidden_act: 'gelu',
    max_position_embeddings: 512,
    type_vocab_size: 0,
    layer_norm_eps: 1e-7,
    relative_attention: true,
    max_relative_positions: -1,
    position_buckets: BUCKETS,
    norm_rel_ebd: 'layer_norm',
    share_att_key: true,
    pos_att_type: 'p2c|c2p',
    position_biased_input: false,
    pad_token_id: 0,
  };
}

/** Deterministic pseudo-normal(0, 0.02) values, cheap enough for GBs. */
export function randomFill(seed: number): (chunk: Float32Array, start: number) => void {
  return (chunk, start) => {
    let x = (seed * 2654435761 + start) >>> 0;
    for (let k = 0; k < chunk.length; k++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      const u = x / 4294967296;
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      chunk[k] = 0.02 * (u + x / 4294967296 - 1) * 2.45; // triangular, std ≈ 0.02
    }
  };
}
export const constant = (v: number) => (chunk: Float32Array) => chunk.fill(v);

/** What a checkpoint adds to a geometry: another vocabulary size (mDeBERTa's 251,000), tensors stored after the
 *  encoder's (a task head, at the top level) and config.json fields (its labels). */
export interface CheckpointExtras {
  vocab?: number;
  tensors?: (rand: (name: string, shape: number[]) => SafetensorsTensorSpec) => SafetensorsTensorSpec[];
  config?: Record<string, unknown>;
}

/** A random v3 checkpoint; with `heads`, also the masked-LM head (microsoft's layout) and the RTD head. */
export function writeV3Checkpoint(dir: string, g: Geometry, heads = false, extras: CheckpointExtras = {}): void {
  const vocab = extras.vocab ?? DEFAULT_VOCAB;
  fs.mkdirSync(dir, { recursive: true });
  const D = g.hidden,
    I = g.intermediate;
  let seed = 1;
  const rand = (name: string, shape: number[]): SafetensorsTensorSpec => ({ name, shape, fill: randomFill(seed++) });
  const ln = (prefix: string): SafetensorsTensorSpec[] => [
    { name: `${prefix}.weight`, shape: [D], fill: constant(1) },
    { name: `${prefix}.bias`, shape: [D], fill: constant(0) },
  ];
  const tensors: SafetensorsTensorSpec[] = [
    rand('deberta.embeddings.word_embeddings.weight', [vocab, D]),
    ...ln('deberta.embeddings.LayerNorm'),
  ];
  for (let l = 0; l < g.layers; l++) {
    const p = `deberta.encoder.layer.${l}`;
    for (const proj of ['query_proj', 'key_proj', 'value_proj']) {
      tensors.push(rand(`${p}.attention.self.${proj}.weight`, [D, D]), rand(`${p}.attention.self.${proj}.bias`, [D]));
    }
    tensors.push(
      rand(`${p}.attention.output.dense.weight`, [D, D]),
      rand(`${p}.attention.output.dense.bias`, [D]),
      ...ln(`${p}.attention.output.LayerNorm`),
    );
    tensors.push(rand(`${p}.intermediate.dense.weight`, [I, D]), rand(`${p}.intermediate.dense.bias`, [I]));
    tensors.push(rand(`${p}.output.dense.weight`, [D, I]), rand(`${p}.output.dense.bias`, [D]), ...ln(`${p}.output.LayerNorm`));
  }
  tensors.push(rand('deberta.encoder.rel_embeddings.weight', [2 * BUCKETS, D]), ...ln('deberta.encoder.LayerNorm'));
  if (heads) {
    tensors.push(
      rand('lm_predictions.lm_head.dense.weight', [D, D]),
      rand('lm_predictions.lm_head.dense.bias', [D]),
      ...ln('lm_predictions.lm_head.LayerNorm'),
    );
    tensors.push(rand('lm_predictions.lm_head.bias', [vocab]));
    tensors.push(
      rand('mask_predictions.dense.weight', [D, D]),
      rand('mask_predictions.dense.bias', [D]),
      ...ln('mask_predictions.LayerNorm'),
    );
    tensors.push(rand('mask_predictions.classifier.weight', [1, D]), rand('mask_predictions.classifier.bias', [1]));
  }
  if (extras.tensors) tensors.push(...extras.tensors(rand));
  writeSafetensors(path.join(dir, 'model.safetensors'), tensors, { metadata: { format: 'pt' } });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...v3Config(g, vocab), ...extras.config }, null, 2));
}
