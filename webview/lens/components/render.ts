// Draws the view the state asks for whenever the store asks for a render: the heatmap, the head grid or an
// analysis view. A view whose data takes a while says so after a moment, and the picture on screen is dimmed
// rather than blanked until the new one is painted; a render overtaken by a newer one paints nothing.
import { $ } from '../../common/dom';
import { renderAnalysis } from '../views/analysis-view';
import { refreshHover } from '../state/actions';
import { isAnalysis } from '../state/selectors';
import { $current, $init, $merged, $renderEpoch, $viewState } from '../state/store';
import type { CompareHeads } from './compare-heads';
import type { HeadsView } from './heads-view';
import type { HeatmapView } from './heatmap-view';
import type { MatrixRequests } from './requests';
import { clearStatus, reportError } from './status';

export class ViewRenderer {
  private seq = 0;

  constructor(
    private readonly requests: MatrixRequests,
    private readonly heatmap: HeatmapView,
    private readonly heads: HeadsView,
    private readonly compare: CompareHeads,
  ) {
    $renderEpoch.listen(() => void this.render());
  }

  /** Resolves when the view is drawn (or a newer render took over). */
  async render(): Promise<void> {
    const state = $viewState.get();
    const init = $init.get();
    if (!state || !init) return;
    const seq = ++this.seq;
    const isCurrent = () => seq === this.seq;
    this.compare.readTheme();
    const app = $('#app');
    const busy = $('#busy');
    const timer = setTimeout(() => {
      if (!isCurrent()) return;
      busy.style.visibility = 'visible';
      app.dataset.busy = 'true';
    }, 150);
    try {
      clearStatus();
      // Word merging is a heatmap feature: the other views index pieces, so the strip shows pieces there.
      if (state.view !== 'heatmap' || !state.merge) $merged.set(undefined);
      if (state.view === 'heatmap') await this.heatmap.render(isCurrent);
      else if (state.view === 'heads') await this.heads.render(isCurrent);
      else if (isAnalysis(state.view)) {
        $current.set(undefined);
        await renderAnalysis(state.view, $('#analysis-view'), {
          request: this.requests.request,
          isCurrent: () => isCurrent() && $init.get() === init,
        });
      }
      if (isCurrent()) refreshHover();
    } catch (e) {
      reportError(e);
    } finally {
      clearTimeout(timer);
      if (isCurrent()) {
        busy.style.visibility = 'hidden';
        delete app.dataset.busy;
      }
    }
  }
}
