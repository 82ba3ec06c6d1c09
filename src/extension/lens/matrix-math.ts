// Small numeric helpers of the host's view responses: block-mean downsampling and per-head summaries.
// Indices stay inside the matrices: the `?? 0` on a read never applies; it only answers the checked index access.

/** Block-mean of an [n, n] matrix into [m, m] (m ≤ n); block edges follow floor(k·n/m). */
export function downsampleInto(src: Float32Array, n: number, m: number, dst: Float32Array): void {
  if (m === n) {
    dst.set(src);
    return;
  }
  const edge = (k: number) => Math.floor((k * n) / m);
  for (let bi = 0; bi < m; bi++) {
    const i0 = edge(bi);
    const i1 = edge(bi + 1);
    for (let bj = 0; bj < m; bj++) {
      const j0 = edge(bj);
      const j1 = edge(bj + 1);
      let s = 0;
      for (let i = i0; i < i1; i++) for (let j = j0; j < j1; j++) s += src[i * n + j] ?? 0;
      dst[bi * m + bj] = s / ((i1 - i0) * (j1 - j0));
    }
  }
}

/** Mean over query rows of the row's entropy, in nats (low = a focused head). */
export function meanRowEntropy(p: Float32Array, n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) {
    let e = 0;
    for (let j = 0; j < n; j++) {
      const v = p[i * n + j] ?? 0;
      if (v > 0) e -= v * Math.log(v);
    }
    total += e;
  }
  return n ? total / n : 0;
}

export function meanAbs(s: Float32Array): number {
  let t = 0;
  for (const v of s) t += Math.abs(v);
  return s.length ? t / s.length : 0;
}
