// Builds ExplainResults from the shared fixtures' HF-computed outputs (test/data/fixtures/deberta/*).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExplainResult, type LayerTensors } from '../../src/engine/result/explain-result';
import type { ModelInfo, TermName, Token } from '../../src/engine/types';
import type { PositionSpec } from '../../src/analysis/matrix';
import { FIXTURES, at } from './helpers';

interface FixtureCase {
  name: string;
  text?: string;
  input_ids: number[];
  expected: {
    scale: number;
    terms: TermName[];
    position_index: number[][];
    layers: Record<'c2c' | 'c2p' | 'p2c' | 'probs', number[][][]>[];
  };
}

export const V3_DIR = path.join(FIXTURES, 'deberta', 'v3_tiny');
/** v3_tiny: position_buckets 16, max_relative_positions −1 → max_position_embeddings 32, span 16. */
export const V3_SPEC: PositionSpec = { positionBuckets: 16, maxRelativePositions: 32, attSpan: 16 };

export function loadCase(name: string): FixtureCase {
  const all = JSON.parse(fs.readFileSync(path.join(V3_DIR, 'expected_outputs.json'), 'utf8')) as { cases: FixtureCase[] };
  const c = all.cases.find((x) => x.name === name);
  if (!c) throw new Error(`no fixture case ${name}`);
  return c;
}

const flat = (m: number[][][]) => Float32Array.from(m.flat(2));

/** The v3_tiny case as an ExplainResult; tokens from expected_tokens.json when the case has text. */
export function fixtureResult(name = 'text0'): ExplainResult {
  const c = loadCase(name);
  const heads = at(c.expected.layers, 0).c2c.length;
  const model: ModelInfo = {
    path: V3_DIR,
    name: 'v3_tiny',
    type: 'deberta-v2',
    layers: c.expected.layers.length,
    heads,
    head_dim: 8,
    terms: c.expected.terms,
    execution_provider: 'cpu',
    checkpoint_hash: 'fixture',
  };
  let tokens: Token[];
  const special = (id: number, text: string, offset: number): Token => ({ id, text, start: offset, end: offset, special: true });
  if (c.text !== undefined) {
    const tk = JSON.parse(fs.readFileSync(path.join(V3_DIR, 'expected_tokens.json'), 'utf8')) as {
      cases: { text: string; tokens: { id: number; piece: string; start: number; end: number }[] }[];
    };
    const t = tk.cases.find((x) => x.text === c.text)!;
    tokens = [
      special(at(c.input_ids, 0), '[CLS]', 0),
      ...t.tokens.map((p) => ({ id: p.id, text: p.piece, start: p.start, end: p.end, special: false })),
      special(at(c.input_ids, c.input_ids.length - 1), '[SEP]', c.text.length),
    ];
  } else {
    tokens = c.input_ids.map((id, i) => ({ id, text: `t${id}`, start: i, end: i + 1, special: false }));
  }
  const layers: LayerTensors[] = c.expected.layers.map((l, layer) => ({
    layer,
    c2c: flat(l.c2c),
    c2p: flat(l.c2p),
    p2c: flat(l.p2c),
    probs: flat(l.probs),
  }));
  return new ExplainResult(model, c.input_ids, tokens, c.expected.scale, layers, c.text);
}
