// Number formatting for everything a person reads: legends, readouts, the editor hover, exports.

/** Short number: 4 significant digits, exponent when tiny or huge; signs and infinities as typeset. */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '+∞' : v < 0 ? '−∞' : 'NaN';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(2);
  return Number(v.toPrecision(4)).toString();
}

/** A signed value with an explicit sign (+1.2, −0.5): raw terms read as "raises" or "lowers" the score. */
export function formatSigned(v: number): string {
  const s = formatValue(v);
  return v > 0 && Number.isFinite(v) ? `+${s}` : s.replace(/^-/, '−');
}
