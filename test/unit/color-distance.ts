// CIELAB (D65) and ΔE*ab for the colour tests: the tests' own conversion, kept apart from webview/common/colors.ts
// (whose ramps are spaced with its own), so a measured distance does not check the code against itself.
export function lab([r = NaN, g = NaN, b = NaN]: readonly number[]): number[] {
  const lin = (u: number) => ((u /= 255) <= 0.04045 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (t * 24389) / 27 / 116 + 16 / 116);
  const x = f((0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047);
  const y = f(0.2126 * R + 0.7152 * G + 0.0722 * B);
  const z = f((0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

export function deltaE(a: readonly number[], b: readonly number[]): number {
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot((p[0] ?? 0) - (q[0] ?? 0), (p[1] ?? 0) - (q[1] ?? 0), (p[2] ?? 0) - (q[2] ?? 0));
}
