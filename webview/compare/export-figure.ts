// Compare Models as one figure (drawn by figure.ts / figure-canvas.ts): each side as the panel draws it (its own tokens as whole words, its own range and
// colour bar, its model, term, layer and head in the title) side by side under one title, PNG or SVG. The host
// asks where to save it. The sides keep their own scales on purpose: two models' scores are not one quantity.
import type { CompareInit, Side } from '../../src/shared/protocol/compare';
import { describeRange, makeLut, type ThemeKind } from '../common/colors';
import { robustRange } from '../../src/shared/value-range';
import type { FigureSpec } from '../common/figure';
import { wordLabels } from '../common/figure-labels';
import type { SideMatrix } from './state/store';

/** Each side's figure this wide; the two make a two-column page width. */
const SIDE_CM = 8.5;
/** PNG resolution. */
export const COMPARE_FIGURE_DPI = 300;

/** The two sides' figures, or why there is nothing to export yet. */
export function compareFigureSpecs(
  pair: CompareInit,
  matrices: Partial<Record<Side, SideMatrix>>,
  theme: ThemeKind,
): { specs: FigureSpec[]; title: string } | { error: string } {
  const specs: FigureSpec[] = [];
  for (const side of ['a', 'b'] as const) {
    const m = matrices[side];
    const info = pair[side];
    if (!m || m.values.length !== m.n * m.n) return { error: `side ${side.toUpperCase()} has no picture yet; wait for it to draw` };
    const signed = m.kind !== 'probs';
    const range = robustRange(m.values, signed);
    const labels = m.n === info.tokens.length ? wordLabels(pair.text, info.tokens) : undefined;
    specs.push({
      values: m.values,
      rows: m.n,
      cols: m.n,
      range,
      lut: makeLut(pair.colorScale, signed, theme),
      title: `${side.toUpperCase()}: ${info.name} · ${m.kind} · L${m.layer} H${m.head}`,
      caption: describeRange(range, m.kind),
      rowLabels: labels,
      colLabels: labels,
      widthCm: SIDE_CM,
      dpi: COMPARE_FIGURE_DPI,
      theme,
    });
  }
  return { specs, title: `${pair.a.name} vs ${pair.b.name} on the same text (each side on its own scale)` };
}

/** A file name for the save dialog. */
export function compareFigureName(pair: CompareInit, matrices: Partial<Record<Side, SideMatrix>>, format: 'png' | 'svg'): string {
  const part = (side: Side) => {
    const m = matrices[side];
    return `${pair[side].name}-${m?.kind ?? ''}-L${m?.layer ?? 0}H${m?.head ?? 0}`;
  };
  return `compare-${part('a')}-vs-${part('b')}`.replace(/[^\w.-]+/g, '-').slice(0, 110) + `.${format}`;
}
