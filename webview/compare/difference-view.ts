// The Difference tab of the compare panel: A − B as one heatmap with its legend and a line saying what was
// subtracted, or why there is nothing to subtract. Painted from the store when its content or the page size
// changes; the linked hover outlines its row.
import type { ColorScaleName } from '../../src/shared/protocol/lens';
import { describeRange, makeLut } from '../common/colors';
import { robustRange } from '../../src/shared/value-range';
import { el, themeKind } from '../common/dom';
import { Heatmap } from '../common/heatmap';
import { paintRamp } from '../common/legend-bar';
import type { Difference } from './difference';
import { diffSize } from './sizes';
import { hoverDifferenceRow, togglePin } from './state/actions';
import { $difference, $focus } from './state/selectors';
import { $pair, $view, $viewport, type Viewport } from './state/store';

interface DiffParts {
  box: HTMLElement;
  note: HTMLElement;
  legend: HTMLElement;
  bar: HTMLCanvasElement;
  legendText: HTMLElement;
}

export class DifferenceView {
  private readonly map = new Heatmap({ hover: (i) => hoverDifferenceRow(i), click: () => togglePin() });
  private parts: DiffParts | undefined;
  private painted: { d: Difference; viewport: Viewport } | undefined;

  constructor() {
    for (const e of this.map.root.querySelectorAll<HTMLElement>('[id]')) e.id = `${e.id}-diff`;
    const render = () => this.render();
    for (const $s of [$view, $difference, $viewport, $focus]) $s.listen(render);
  }

  mount(): HTMLElement {
    const note = el('p', { id: 'diff-note', class: 'meta' });
    const bar = el('canvas', { id: 'diff-legend-bar', class: 'legend-bar', width: '256', height: '1', 'aria-hidden': 'true' });
    const legendText = el('span', { id: 'diff-legend-text', class: 'meta' });
    const legend = el('div', { id: 'diff-legend', class: 'legend cmp-legend', hidden: '' }, [bar, legendText]);
    const box = el('section', { id: 'diff-view', 'aria-label': 'Difference A − B', hidden: '' }, [note, legend, this.map.root]);
    this.parts = { box, note, legend, bar, legendText };
    this.painted = undefined;
    return box;
  }

  render(): void {
    const pair = $pair.get();
    const parts = this.parts;
    if (!pair || !parts) return;
    parts.box.hidden = $view.get() !== 'diff';
    const d = $difference.get();
    if (!d) return;
    const viewport = $viewport.get();
    if (this.painted?.d !== d || this.painted.viewport !== viewport) this.paint(parts, pair.colorScale, d, viewport);
    if (!d.ok) return;
    const f = $focus.get();
    this.map.setHover(d.pooled ? f.group : (f.sides.a.query[0] ?? null), null);
  }

  private paint(parts: DiffParts, colorScale: ColorScaleName, d: Difference, viewport: Viewport): void {
    const { box, note, legend, bar, legendText } = parts;
    this.painted = { d, viewport };
    if (!d.ok) {
      note.textContent = d.message;
      box.dataset.state = 'none';
      this.map.root.hidden = true;
      legend.hidden = true;
      return;
    }
    const range = robustRange(d.values, true);
    const lut = makeLut(colorScale, true, themeKind());
    this.map.root.hidden = false;
    this.map.readTheme();
    this.map.set({ values: d.values, n: d.n, range, lut, labels: d.labels }, diffSize(viewport));
    note.textContent = d.caption;
    box.dataset.state = d.pooled ? 'pooled' : 'cells';
    legend.hidden = false;
    paintRamp(bar, lut);
    legendText.textContent = `${describeRange(range, 'A − B').replace('(blue lowers the score, red raises it)', '(red: A higher, blue: B higher)')}${d.pooled ? ' · each side: mean over the span’s tokens' : ''}`;
  }
}
