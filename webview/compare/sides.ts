// Both sides of the compare panel, shown from the store: each side's pickers, matrix, error line, lit tokens and
// readout. The side views are built again for each pair; what each last showed is kept so that a hover does not
// repaint a heatmap.
import { SIDES, type CompareInit, type CompareSliceRequest, type Side } from '../../src/shared/protocol/compare';
import { el } from '../common/dom';
import { CompareSideView } from './side-view';
import { sideSize } from './sizes';
import { $focus, $readouts } from './state/selectors';
import { $errors, $matrices, $pair, $picks, $viewport, type SideMatrix, type Viewport } from './state/store';

interface Shown {
  pick?: CompareSliceRequest;
  matrix?: SideMatrix;
  viewport?: Viewport;
}

export class CompareSides {
  private views: Record<Side, CompareSideView> | undefined;
  private shown: Record<Side, Shown> = { a: {}, b: {} };

  constructor() {
    const render = () => this.render();
    for (const $s of [$picks, $matrices, $errors, $viewport, $focus, $readouts]) $s.listen(render);
  }

  /** Both sides' DOM for a new pair. */
  mount(pair: CompareInit): HTMLElement {
    this.views = {
      a: new CompareSideView('a', pair.a, pair.colorScale, pair.text),
      b: new CompareSideView('b', pair.b, pair.colorScale, pair.text),
    };
    this.shown = { a: {}, b: {} };
    return el('div', { class: 'cmp-sides' }, [this.views.a.root, this.views.b.root]);
  }

  render(): void {
    const views = this.views;
    if (!views || !$pair.get()) return;
    const picks = $picks.get();
    const matrices = $matrices.get();
    const viewport = $viewport.get();
    const focus = $focus.get();
    const readouts = $readouts.get();
    for (const side of SIDES) {
      const view = views[side];
      const shown = this.shown[side];
      if (picks && picks[side] !== shown.pick) view.setPick((shown.pick = picks[side]));
      const m = matrices[side];
      // A new matrix, or the page was resized: paint (a hover alone does not).
      if (m && (m !== shown.matrix || viewport !== shown.viewport)) {
        view.show(m, sideSize(viewport));
        shown.matrix = m;
        shown.viewport = viewport;
      }
      view.setStatus($errors.get()[side] ?? '');
      const f = focus.sides[side];
      view.highlight(f.query, f.keys, f.row);
      view.setReadout(readouts[side]);
    }
  }
}
