// A random-weight BERT of the bundled model's size (4 layers × 256 hidden × 8 heads), written at bench or
// screenshot time (never committed): the BERT fixture has absolute positions for 64 tokens only, too few to
// time or look at the Compare panel at 128–512 tokens. Its WordPiece vocabulary is the fixture's (specials,
// characters, a few pieces) plus the whole words of the texts it will read, so those split about as a real
// BERT vocabulary would split them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SafetensorsTensorSpec, writeSafetensors } from '../fixtures/write-safetensors';
import { constant, randomFill } from './geometries';

export const BERT_SMALL = { hidden: 256, layers: 4, heads: 8, intermediate: 1024, positions: 1024 } as const;

/** Writes config.json, vocab.txt, tokenizer_config.json and model.safetensors into `dir`. */
export function writeBertCheckpoint(dir: string, fixtureDir: string, texts: readonly string[]): void {
  fs.mkdirSync(dir, { recursive: true });
  const base = fs
    .readFileSync(path.join(fixtureDir, 'vocab.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const have = new Set(base);
  const words = new Set<string>();
  for (const t of texts)
    for (const w of t
      .toLowerCase()
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .match(/\p{L}+/gu) ?? [])
      if (!have.has(w)) words.add(w);
  const vocab = [...base, ...[...words].sort()];
  fs.writeFileSync(path.join(dir, 'vocab.txt'), `${vocab.join('\n')}\n`);
  const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(
    path.join(dir, 'tokenizer_config.json'),
    JSON.stringify({ ...tokenizerConfig, model_max_length: BERT_SMALL.positions }, null, 2),
  );
  const g = BERT_SMALL;
  const D = g.hidden;
  const I = g.intermediate;
  let seed = 7;
  const rand = (name: string, shape: number[]): SafetensorsTensorSpec => ({ name, shape, fill: randomFill(seed++) });
  const ln = (prefix: string): SafetensorsTensorSpec[] => [
    { name: `${prefix}.weight`, shape: [D], fill: constant(1) },
    { name: `${prefix}.bias`, shape: [D], fill: constant(0) },
  ];
  const tensors: SafetensorsTensorSpec[] = [
    rand('bert.embeddings.word_embeddings.weight', [vocab.length, D]),
    rand('bert.embeddings.position_embeddings.weight', [g.positions, D]),
    rand('bert.embeddings.token_type_embeddings.weight', [2, D]),
    ...ln('bert.embeddings.LayerNorm'),
  ];
  for (let l = 0; l < g.layers; l++) {
    const p = `bert.encoder.layer.${l}`;
    for (const proj of ['query', 'key', 'value'])
      tensors.push(rand(`${p}.attention.self.${proj}.weight`, [D, D]), rand(`${p}.attention.self.${proj}.bias`, [D]));
    tensors.push(
      rand(`${p}.attention.output.dense.weight`, [D, D]),
      rand(`${p}.attention.output.dense.bias`, [D]),
      ...ln(`${p}.attention.output.LayerNorm`),
    );
    tensors.push(rand(`${p}.intermediate.dense.weight`, [I, D]), rand(`${p}.intermediate.dense.bias`, [I]));
    tensors.push(rand(`${p}.output.dense.weight`, [D, I]), rand(`${p}.output.dense.bias`, [D]), ...ln(`${p}.output.LayerNorm`));
  }
  writeSafetensors(path.join(dir, 'model.safetensors'), tensors, { metadata: { format: 'pt' } });
  const config = {
    model_type: 'bert',
    vocab_size: vocab.length,
    hidden_size: D,
    num_hidden_layers: g.layers,
    num_attention_heads: g.heads,
    intermediate_size: I,
    hidden_act: 'gelu',
    max_position_embeddings: g.positions,
    type_vocab_size: 2,
    layer_norm_eps: 1e-12,
    pad_token_id: 0,
    position_embedding_type: 'absolute',
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
}
