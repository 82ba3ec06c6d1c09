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

/**
 * A size in bytes. binary (the default; export sizes, which the panel compares to a ceiling in MiB): "12.5 MiB",
 * "840 KiB". decimal (disk and memory, as the cache limit is given in decimal GB): "1.23 GB", "45.6 MB", "7.8 kB".
 */
export function formatBytes(b: number, units: 'binary' | 'decimal' = 'binary'): string {
  if (units === 'decimal') {
    if (b >= 1e9) return `${(b / 1e9).toFixed(2)} GB`;
    if (b >= 1e6) return `${(b / 1e6).toFixed(1)} MB`;
    return `${(b / 1e3).toFixed(1)} kB`;
  }
  return b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(b >= 10 * 2 ** 20 ? 0 : 1)} MiB` : `${Math.max(1, Math.round(b / 1024))} KiB`;
}

/** A probability as a percentage with the digits that matter: 45.1%, 5.5%, 0.36%, 2.1e-3%. */
export function formatProb(p: number): string {
  if (!Number.isFinite(p)) return '–';
  const pct = p * 100;
  if (pct >= 99.95 && pct < 100) return '>99.9%';
  if (pct >= 1) return `${pct.toFixed(1)}%`;
  if (pct >= 0.01) return `${Number(pct.toPrecision(2))}%`;
  if (pct === 0) return '0%';
  return `${pct.toExponential(1)}%`;
}
