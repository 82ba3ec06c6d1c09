// BERT's layer-0 score split exactly by what enters the embedding LayerNorm. With e = w + p + y (word, position,
// token-type rows), C(v) = v − mean(v) and the shared scale σ = sqrt(mean(C(e)²) + eps), LayerNorm(e) is the sum of
// content c = γ⊙C(w)/σ, position r = γ⊙C(p)/σ and rest u = γ⊙C(y)/σ + β. Projecting each part through layer 0's
// query and key (the biases go with the rest) splits the score q·k/√d into c2c, c2p, p2c, p2p and rest, named
// as DeBERTa's terms are: the first letter is the query side.
import type { DecompositionTerm } from '../../shared/kinds';
import type { ModelSpec } from '../types';
import type { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

export const DecompositionInput = {
  content: 'part_content',
  position: 'part_position',
  rest: 'part_rest',
  wq: 'w_q',
  bq: 'b_q',
  wk: 'w_k',
  bk: 'b_k',
} as const;

export { DECOMPOSITION_TERMS, type DecompositionTerm } from '../../shared/kinds';

/** Forward-graph outputs holding the three parts of the embedding LayerNorm's output, each [n, D]. */
export const EMBEDDING_PARTS = { content: 'embedding_content', position: 'embedding_position', rest: 'embedding_rest' } as const;

/**
 * Adds to a graph the three parts of LayerNorm(w + p + y) (inputs [n, D] each; γ, β [D]); returns their names.
 * Their sum is the LayerNorm output up to float rounding; the forward pass itself keeps ONNX's LayerNormalization.
 */
export function embeddingParts(g: GraphBuilder, w: string, p: string, y: string, gamma: string, beta: string, eps: number) {
  const axes = g.constInt64([-1]);
  const center = (x: string) => g.node('Sub', [x, g.node('ReduceMean', [x, axes], { keepdims: 1 })]);
  const cw = center(w),
    cp = center(p),
    cy = center(y);
  const ce = g.node('Add', [g.node('Add', [cw, cp]), cy]);
  const variance = g.node('ReduceMean', [g.node('Mul', [ce, ce]), axes], { keepdims: 1 });
  const sigma = g.node('Sqrt', [g.node('Add', [variance, g.constFloat([eps], [])])]);
  const part = (x: string) => g.node('Mul', [g.node('Div', [x, sigma]), gamma]);
  return { content: part(cw), position: part(cp), rest: g.node('Add', [part(cy), beta]) };
}

/**
 * The decomposition for a range of heads: inputs the three parts [n, D] and layer 0's query/key rows and biases
 * of those heads ([h·d, D], [h·d]); outputs c2c, c2p, p2c, p2p, rest as [h, n, n] in score units (÷√d).
 */
export function buildDecompositionGraph(g: GraphBuilder, s: ModelSpec): void {
  const D = s.hiddenSize,
    d = s.headDim;
  const I = DecompositionInput;
  const part = (name: string) => g.input(name, OnnxType.FLOAT, ['n', D]);
  const c = part(I.content),
    r = part(I.position),
    u = part(I.rest);
  const wq = g.input(I.wq, OnnxType.FLOAT, ['hd', D]),
    bq = g.input(I.bq, OnnxType.FLOAT, ['hd']);
  const wk = g.input(I.wk, OnnxType.FLOAT, ['hd', D]),
    bk = g.input(I.bk, OnnxType.FLOAT, ['hd']);
  const headsShape = g.constInt64([0, -1, d]);
  // x W^T (+ b) → [h, n, d]
  const heads = (x: string, w: string, b?: string) => {
    const y = g.node('Gemm', b ? [x, w, b] : [x, w], { transB: 1 });
    return g.node('Transpose', [g.node('Reshape', [y, headsShape])], { perm: [1, 0, 2] });
  };
  const qc = heads(c, wq),
    qp = heads(r, wq),
    qu = heads(u, wq, bq);
  const kc = heads(c, wk),
    kp = heads(r, wk),
    ku = heads(u, wk, bk);
  const inv = g.constFloat([1 / Math.sqrt(d)], []);
  const dot = (q: string, k: string) => g.node('MatMul', [q, g.node('Transpose', [k], { perm: [0, 2, 1] })]);
  const scaled = (x: string, name: DecompositionTerm) => {
    const out = g.node('Mul', [x, inv], {}, name);
    g.output(out, name, OnnxType.FLOAT, ['h', 'n', 'n']);
  };
  scaled(dot(qc, kc), 'c2c');
  scaled(dot(qc, kp), 'c2p');
  scaled(dot(qp, kc), 'p2c');
  scaled(dot(qp, kp), 'p2p');
  // (Qc + Qp)·Ku + Qu·(Kc + Kp) + Qu·Ku, from its own products rather than by subtraction.
  const rest = g.node('Add', [g.node('Add', [dot(g.node('Add', [qc, qp]), ku), dot(qu, g.node('Add', [kc, kp]))]), dot(qu, ku)]);
  scaled(rest, 'rest');
}
