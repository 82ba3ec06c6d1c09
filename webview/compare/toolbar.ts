// The compare panel's toolbar: the Side by side / Difference tabs and a line on the text and its tokens.
import type { CompareInit } from '../../src/shared/protocol/compare';
import { el } from '../common/dom';
import { showView } from './state/actions';
import { $matrices, $pair, $view, type CompareView } from './state/store';
import { themeKind } from '../common/dom';
import { figureRowSvg } from '../common/figure';
import { figureRowCanvas } from '../common/figure-canvas';
import { COMPARE_FIGURE_DPI, compareFigureName, compareFigureSpecs } from './export-figure';
import { host } from './host';

/** Both sides as drawn, as one figure, to the host (which asks where to save it); a line in the meta when not ready. */
function exportBothSides(format: 'png' | 'svg'): void {
  const pair = $pair.get();
  if (!pair) return;
  const theme = themeKind();
  const made = compareFigureSpecs(pair, $matrices.get(), theme);
  const meta = document.getElementById('cmp-meta');
  if ('error' in made) {
    if (meta) {
      const was = meta.textContent;
      meta.textContent = `Export: ${made.error}`;
      setTimeout(() => (meta.textContent = was), 4000);
    }
    return;
  }
  const image =
    format === 'svg'
      ? { svg: figureRowSvg(made.specs, made.title, theme) }
      : { dataUrl: figureRowCanvas(made.specs, made.title, theme, COMPARE_FIGURE_DPI).toDataURL('image/png') };
  host.post({ type: 'export', format, name: compareFigureName(pair, $matrices.get(), format), ...image });
}

export class CompareToolbar {
  private tabs: Record<CompareView, HTMLButtonElement> | undefined;

  constructor() {
    $view.listen(() => this.render());
  }

  mount(pair: CompareInit): HTMLElement {
    const tab = (id: string, label: string, v: CompareView) => {
      const b = el('button', { id, type: 'button', role: 'tab', 'aria-selected': 'false' }, [label]);
      b.addEventListener('click', () => showView(v));
      return b;
    };
    this.tabs = { sides: tab('tab-sides', 'Side by side', 'sides'), diff: tab('tab-diff', 'Difference (A − B)', 'diff') };
    const tokensNote = pair.sameTokens ? 'same tokens on both sides' : `${pair.a.tokens.length} vs ${pair.b.tokens.length} tokens`;
    const exportButton = (format: 'png' | 'svg') => {
      const b = el('button', { id: `cmp-export-${format}`, type: 'button', title: `Both sides as one figure (${format.toUpperCase()})` }, [
        `Export ${format.toUpperCase()}`,
      ]);
      b.addEventListener('click', () => exportBothSides(format));
      return b;
    };
    return el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Compare controls' }, [
      el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'View' }, [this.tabs.sides, this.tabs.diff]),
      el('span', { class: 'meta', id: 'cmp-meta' }, [`${pair.text.length} characters · ${tokensNote}`]),
      exportButton('png'),
      exportButton('svg'),
    ]);
  }

  render(): void {
    if (!this.tabs) return;
    const v = $view.get();
    this.tabs.sides.setAttribute('aria-selected', String(v === 'sides'));
    this.tabs.diff.setAttribute('aria-selected', String(v === 'diff'));
  }
}
