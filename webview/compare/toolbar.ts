// The compare panel's toolbar: the Side by side / Difference tabs and a line on the text and its tokens.
import type { CompareInit } from '../../src/shared/protocol/compare';
import { el } from '../common/dom';
import { showView } from './state/actions';
import { $view, type CompareView } from './state/store';

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
    return el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Compare controls' }, [
      el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'View' }, [this.tabs.sides, this.tabs.diff]),
      el('span', { class: 'meta', id: 'cmp-meta' }, [`${pair.text.length} characters · ${tokensNote}`]),
    ]);
  }

  render(): void {
    if (!this.tabs) return;
    const v = $view.get();
    this.tabs.sides.setAttribute('aria-selected', String(v === 'sides'));
    this.tabs.diff.setAttribute('aria-selected', String(v === 'diff'));
  }
}
