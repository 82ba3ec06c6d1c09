// The few float64 operations a task head needs (an affine map, Hugging Face's ACT2FN activations, softmax,
// sigmoid). The heads are a D×D and a D×labels product per row: computed here in JS from the encoder's last hidden
// state, accumulating in float64, rather than as another ONNX graph and process round trip.
import type { ModelSpec } from '../types';

/** y = W x + b for W [rows, D] row-major, x the D values of `x` from `offset`. */
export function affine(w: Float32Array, b: Float32Array, x: ArrayLike<number>, offset: number, D: number): Float64Array {
  const rows = b.length;
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = b[r]!;
    const at = r * D;
    for (let k = 0; k < D; k++) s += w[at + k]! * x[offset + k]!;
    y[r] = s;
  }
  return y;
}

/** erf to double precision: its Maclaurin series near 0, a continued fraction for erfc further out. */
export function erf(x: number): number {
  const a = Math.abs(x);
  if (a < 2.5) {
    // Σ (−1)^n x^(2n+1) / (n! (2n+1)) · 2/√π; at |x| < 2.5 the largest term is ~40, so ~1e-14 is kept.
    let term = a,
      sum = a;
    const x2 = a * a;
    for (let n = 1; n < 80; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * sum * (2 / Math.sqrt(Math.PI));
  }
  if (a > 6) return Math.sign(x); // erfc(6) ≈ 2e-17
  // erfc(a) = exp(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …)))), evaluated from the tail.
  let f = a;
  for (let k = 60; k >= 1; k--) f = a + k / 2 / f;
  const erfc = Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** Hugging Face's ACT2FN by the names config-fields.ts maps onto. */
export function activation(name: ModelSpec['hiddenAct']): (x: number) => number {
  switch (name) {
    case 'gelu':
      return (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));
    case 'gelu_new':
      return (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
    case 'gelu_fast':
      return (x) => 0.5 * x * (1 + Math.tanh(x * 0.7978845608 * (1 + 0.044715 * x * x)));
    case 'quick_gelu':
      return (x) => x * sigmoid(1.702 * x);
    case 'relu':
      return (x) => Math.max(0, x);
    case 'tanh':
      return Math.tanh;
    case 'silu':
      return (x) => x * sigmoid(x);
  }
}

export function softmax(xs: ArrayLike<number>): number[] {
  const v = Array.from(xs);
  const max = Math.max(...v);
  const e = v.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

export { sigmoid };

/** Index of the largest value (the first one on ties, as argmax does). */
export function argmax(xs: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! > xs[best]!) best = i;
  return best;
}
