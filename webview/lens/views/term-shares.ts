// The Term shares tab for DeBERTa: one cell per head (rows layers, columns heads) coloured by how much of its
// score comes from content (c2c, green) rather than relative position (c2p + p2c, purple), the current head
// outlined; a click opens that head's heatmap.
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { cssRgb } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { withAxisLabels } from '../../common/grid-labels';
import { openHead } from '../state/actions';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { paletteLut, readout, swatch } from './kit';
import { labelTag, shareColor, shareText } from './shares-model';
import type { ViewContext } from './view-context';

export async function renderTermShares(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { state } = shown;
  const r = await ctx.request({ type: 'shares', weighting: 'uniform' });
  if (!ctx.isCurrent()) return;
  const L = r.layers.length;
  const H = r.heads;
  const content = fromBuffer(r.content, L * H);
  const c2p = r.c2p ? fromBuffer(r.c2p, L * H) : undefined;
  const p2c = r.p2c ? fromBuffer(r.p2c, L * H) : undefined;
  const theme = themeKind();
  const cell = Math.max(18, Math.min(44, Math.floor(560 / Math.max(H, 1))));
  const c = el('canvas', {
    id: 'shares-grid',
    class: 'analysis-canvas',
    role: 'img',
    tabindex: '0',
    'aria-label': 'Term shares: rows layers, columns heads; green content, purple position',
  });
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(H * cell * dpr);
  c.height = Math.round(L * cell * dpr);
  c.style.width = `${H * cell}px`;
  c.style.height = `${L * cell}px`;
  const g = c.getContext('2d');
  if (g) {
    g.scale(dpr, dpr);
    g.font = `${Math.round(cell * 0.45)}px sans-serif`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    for (let li = 0; li < L; li++) {
      for (let h = 0; h < H; h++) {
        const k = li * H + h;
        g.fillStyle = cssRgb(shareColor(content[k] ?? NaN, theme));
        g.fillRect(h * cell, li * cell, cell - 1, cell - 1);
        g.fillStyle = theme === 'dark' ? '#eee' : '#111';
        const label = r.labels[k];
        if (label) g.fillText(labelTag(label), h * cell + cell / 2, li * cell + cell / 2);
      }
    }
    const ci = r.layers.indexOf(state.layer);
    if (ci >= 0) {
      g.strokeStyle = theme === 'dark' ? '#fff' : '#000';
      g.lineWidth = 2;
      g.strokeRect(state.head * cell + 1, ci * cell + 1, cell - 3, cell - 3);
    }
  }
  /** The layer (as the result numbers it) and head under the pointer. */
  const at = (e: MouseEvent) => {
    const b = c.getBoundingClientRect();
    const li = Math.floor(((e.clientY - b.top) / b.height) * L);
    const h = Math.floor(((e.clientX - b.left) / b.width) * H);
    const layer = r.layers[li];
    return layer !== undefined && h >= 0 && h < H ? { li, layer, h } : undefined;
  };
  c.addEventListener('mousemove', (e) => {
    const p = at(e);
    const k = p ? p.li * H + p.h : -1;
    const label = r.labels[k];
    if (p && label) readout(shareText(p.layer, p.h, content[k] ?? NaN, label, c2p?.[k], p2c?.[k]));
  });
  c.addEventListener('click', (e) => {
    const p = at(e);
    if (p) openHead(p.layer, p.h);
  });
  const counts = { content: 0, positional: 0, mixed: 0 };
  for (const l of r.labels) counts[l]++;
  const legend = el('div', { id: 'shares-legend', class: 'legend' }, [
    swatch(shareColor(1, theme), `C content (c2c share ≥ ${r.thresholds.content}): ${counts.content}`),
    swatch(shareColor(0.5, theme), `M mixed: ${counts.mixed}`),
    swatch(shareColor(0, theme), `P positional (c2c share ≤ ${r.thresholds.positional}): ${counts.positional}`),
    el('span', { class: 'meta' }, ['Click a head to open it.']),
  ]);
  body.append(
    withAxisLabels(
      c,
      r.layers.map((l) => `L${l}`),
      Array.from({ length: H }, (_, h) => `H${h}`),
      cell,
      { rows: 'layer', cols: 'head' },
    ),
    legend,
  );
  const lut = paletteLut((t) => shareColor(t, theme));
  $picture.set({
    canvas: c,
    values: content,
    rows: L,
    cols: H,
    range: { min: 0, max: 1, signed: false },
    lut,
    title: 'Content share per layer (rows) and head (columns)',
  });
}
