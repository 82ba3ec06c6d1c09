// The distance profile's line chart: mean per δ with a ±std band, x from δ = −(n−1) to n−1, the zero line and
// δ = 0 marked. c2c, when drawn beside position terms, is a thin dashed reference line without a band.
import { formatValue } from '../../../src/shared/format';
import { profileRange, SERIES_COLORS } from './distance-model';

export type ProfileLine = { kind: keyof typeof SERIES_COLORS; mean: Float32Array; std: Float32Array; peak: number };

/** Draws the chart into `c` (w × h CSS pixels); returns the |δ| beyond which lines leave the plot, when some do. */
export function drawProfile(
  c: HTMLCanvasElement,
  w: number,
  h: number,
  n: number,
  s: ProfileLine[],
  withStd: boolean,
  names = true,
): number | undefined {
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  c.style.width = `${w}px`;
  c.style.height = `${h}px`;
  const g = c.getContext('2d');
  if (!g) return undefined;
  g.scale(dpr, dpr);
  const fg = getComputedStyle(document.body).getPropertyValue('--vscode-foreground').trim() || '#888';
  g.clearRect(0, 0, w, h);
  const pad = { l: 44, r: 8, t: 8, b: 20 };
  const m = 2 * n - 1;
  const reference = (x: ProfileLine) => x.kind === 'c2c' && s.length > 1;
  const band = (x: ProfileLine) => withStd && !reference(x);
  // The y axis fits the distances with at least a quarter of the diagonal's pairs (the peak rule's): the last few
  // δ average one or two cells and would otherwise set the scale and flatten everything else.
  const far = n - Math.ceil(n / 4);
  const near = (k: number) => Math.abs(k - (n - 1)) <= far;
  const masked = (v: Float32Array) => v.map((x, k) => (near(k) ? x : NaN));
  const yr = profileRange(s.map((x) => ({ mean: masked(x.mean), std: band(x) ? x.std : new Float32Array(x.std.length) })));
  const beyond = s.some((x) => x.mean.some((v, k) => !near(k) && Number.isFinite(v) && (v < yr.min || v > yr.max)));
  const X = (k: number) => pad.l + ((k + 0.5) / m) * (w - pad.l - pad.r);
  const Y = (v: number) => pad.t + (1 - (v - yr.min) / (yr.max - yr.min)) * (h - pad.t - pad.b);
  g.strokeStyle = fg;
  g.globalAlpha = 0.4;
  g.beginPath();
  if (yr.min < 0 && yr.max > 0) {
    g.moveTo(pad.l, Y(0));
    g.lineTo(w - pad.r, Y(0));
  }
  g.moveTo(X(n - 1), pad.t);
  g.lineTo(X(n - 1), h - pad.b);
  g.stroke();
  g.globalAlpha = 1;
  g.fillStyle = fg;
  g.font = '11px sans-serif';
  g.fillText(formatValue(yr.max), 2, pad.t + 8);
  g.fillText(formatValue(yr.min), 2, h - pad.b);
  g.fillText(`δ = −${n - 1}`, pad.l, h - 4);
  g.fillText('0', X(n - 1) - 3, h - 4);
  g.fillText(`+${n - 1}`, w - pad.r - 28, h - 4);
  g.save();
  g.beginPath();
  g.rect(pad.l, pad.t, w - pad.l - pad.r, h - pad.t - pad.b);
  g.clip();
  s.forEach((x) => {
    const col = SERIES_COLORS[x.kind];
    if (band(x)) {
      g.fillStyle = col;
      g.globalAlpha = 0.15;
      const bw = Math.max(1, (w - pad.l - pad.r) / m);
      for (let k = 0; k < m; k++) {
        const mean = x.mean[k] ?? NaN;
        const std = x.std[k] ?? NaN;
        if (!Number.isFinite(mean)) continue;
        g.fillRect(X(k) - bw / 2, Y(mean + std), bw, Math.max(1, Y(mean - std) - Y(mean + std)));
      }
      g.globalAlpha = 1;
    }
    g.strokeStyle = col;
    // Over a hundred distances a 1.5 px line fills the plot: thinner lines stay apart.
    g.lineWidth = reference(x) || m > 100 ? 1 : 1.5;
    g.setLineDash(reference(x) ? [4, 3] : []);
    g.beginPath();
    let started = false;
    x.mean.forEach((mean, k) => {
      if (!Number.isFinite(mean)) return;
      if (!started) g.moveTo(X(k), Y(mean));
      else g.lineTo(X(k), Y(mean));
      started = true;
    });
    g.stroke();
    g.setLineDash([]);
  });
  g.restore();
  if (names) {
    s.forEach((x, idx) => {
      g.fillStyle = SERIES_COLORS[x.kind];
      g.fillText(x.kind, w - pad.r - 40, pad.t + 12 + idx * 13);
    });
  }
  return beyond ? far : undefined;
}
