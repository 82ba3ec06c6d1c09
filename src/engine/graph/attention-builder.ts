// The attention every encoder graph builds with the same code (so their numbers agree): head reshapes, linear
// layers, the skew that reads c2p and p2c off a [h, n, 2n] product, the terms and the softmax.
import type { ModelSpec, TermName } from '../types';
import { InputName, scaleOf, termFlags } from './deberta-io';
import type { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

/** Changes one raw attention term of a group of heads before it is added to the score (an intervention). */
export type TermEdit = (kind: TermName, term: string) => string;

/** Shared pieces of both graphs: head reshapes, linear layers, the skew and the attention terms. */
export class AttentionBuilder {
  readonly flags: ReturnType<typeof termFlags>;
  private readonly headsShape: string;
  private readonly invScale: string;
  private skewFn?: (x: string, out?: string) => string;
  private c2pPick = '';
  private p2cPick = '';

  constructor(
    readonly g: GraphBuilder,
    readonly s: ModelSpec,
  ) {
    this.flags = termFlags(s);
    this.headsShape = g.constInt64([0, -1, s.headDim]); // [n, h·d] → [n, h, d], any head count h
    this.invScale = g.constFloat([1 / scaleOf(s)], []);
    if (!this.flags.relative) return;
    const start = g.input(InputName.skewStart, OnnxType.INT64, [1]);
    const end = g.input(InputName.skewEnd, OnnxType.INT64, [1]);
    const shape = g.input(InputName.skewShape, OnnxType.INT64, [3]);
    const nVec = g.input(InputName.n, OnnxType.INT64, [1]);
    const flatShape = g.constInt64([0, -1]);
    const axis1 = g.constInt64([1]),
      axis2 = g.constInt64([2]),
      zero = g.constInt64([0]);
    // out[r, c] = C[r, (n−1) − r + c] for C of shape [h, n, 2n]: flatten, drop n−1, view as [h, n, 2n−1], keep n.
    this.skewFn = (x: string, out?: string) => {
      const flat = g.node('Reshape', [x, flatShape]);
      const part = g.node('Slice', [flat, start, end, axis1]);
      return g.node('Slice', [g.node('Reshape', [part, shape]), zero, nVec, axis2], {}, out);
    };
    if (this.flags.c2p) this.c2pPick = g.input(InputName.c2pPick, OnnxType.INT64, ['2n']);
    if (this.flags.p2c) this.p2cPick = g.input(InputName.p2cPick, OnnxType.INT64, ['2n']);
  }

  toHeads(x: string, perm: number[]): string {
    return this.g.node('Transpose', [this.g.node('Reshape', [x, this.headsShape])], { perm });
  }

  linear(x: string, w: string, b?: string): string {
    return this.g.node('Gemm', b ? [x, w, b] : [x, w], { transB: 1 });
  }

  /** v1 in_proj output [n, h·3d] (rows grouped per head as [q_h | k_h | v_h]) → q, k, v as [n, h, d]. */
  splitQkv(qkvFlat: string): [string, string, string] {
    const d = this.s.headDim;
    const qkv = this.g.node('Reshape', [qkvFlat, this.g.constInt64([0, -1, 3 * d])]);
    const [q, k, v] = this.g.nodeN('Split', [qkv, this.g.constInt64([d, d, d])], 3, { axis: 2 });
    return [q, k, v];
  }

  /**
   * c2c, c2p, p2c and the softmax for heads given as q, k `[h, n, d]`, and the projected relative rows pk, pq
   * `[u, h·d]` (undefined for a term the model lacks). Names the outputs when `names` is given.
   */
  terms(
    q: string,
    k: string,
    pk: string | undefined,
    pq: string | undefined,
    names?: (kind: TermName | 'probs') => string,
    edit?: TermEdit,
    tile?: (x: string) => string,
    scoreEdit?: (score: string) => string,
  ) {
    // [h, d, 2n]; `tile` repeats it for a batch of variants whose heads are stacked on axis 0.
    const byDistance = (p: string, pick: string) => () => {
      const laid = this.toHeads(this.g.node('Gather', [p, pick], { axis: 0 }), [1, 2, 0]);
      return tile ? tile(laid) : laid;
    };
    return this.termsOf(
      q,
      k,
      { c2p: pk ? byDistance(pk, this.c2pPick) : undefined, p2c: pq ? byDistance(pq, this.p2cPick) : undefined },
      names,
      edit,
      scoreEdit,
    );
  }

  /**
   * The projected relative table `[h·d, 2S]` of a range of heads (see buildPositionsGraph) laid out by distance
   * for one term, `[h, d, 2n]`: the picks are then rows of the table, not of the rows this input uses.
   */
  fromTable(table: string, kind: 'c2p' | 'p2c'): () => string {
    const g = this.g;
    const heads = g.constInt64([-1, this.s.headDim, 2 * this.s.attSpan]);
    return () => g.node('Gather', [g.node('Reshape', [table, heads]), kind === 'c2p' ? this.c2pPick : this.p2cPick], { axis: 2 });
  }

  /** terms() with the position projections given as makers of their `[h, d, 2n]` layout (called where needed). */
  termsOf(
    q: string,
    k: string,
    pos: { c2p?: () => string; p2c?: () => string },
    names?: (kind: TermName | 'probs') => string,
    edit?: TermEdit,
    scoreEdit?: (score: string) => string,
  ) {
    const g = this.g;
    const edited = (kind: TermName, t: string) => (edit ? edit(kind, t) : t);
    const kT = g.node('Transpose', [k], { perm: [0, 2, 1] });
    const c2c = g.node('MatMul', [q, kT], {}, names?.('c2c'));
    const terms: Partial<Record<TermName, string>> = { c2c };
    let sum = edited('c2c', c2c);
    if (this.flags.c2p && pos.c2p && this.skewFn) {
      const pkT = pos.c2p(); // [h, d, 2n]
      terms.c2p = this.skewFn(g.node('MatMul', [q, pkT]), names?.('c2p'));
      sum = g.node('Add', [sum, edited('c2p', terms.c2p)]);
    }
    if (this.flags.p2c && pos.p2c && this.skewFn) {
      const pqT = pos.p2c(); // [h, d, 2n]
      const transposed = this.skewFn(g.node('MatMul', [k, pqT])); // [h, n(key j), n(query i)]
      terms.p2c = g.node('Transpose', [transposed], { perm: [0, 2, 1] }, names?.('p2c'));
      sum = g.node('Add', [sum, edited('p2c', terms.p2c)]);
    }
    // The raw score (c2c + c2p + p2c, unscaled): a patch or an edge knockout changes it here (activation patching).
    if (scoreEdit) sum = scoreEdit(sum);
    const probs = g.node('Softmax', [g.node('Mul', [sum, this.invScale])], { axis: -1 }, names?.('probs'));
    return { terms, probs, score: sum };
  }
}
