// The alignment strip in the compare panel, or the line saying why the tokenizations could not be aligned;
// lit up from the store's linked hover.
import type { CompareInit } from '../../src/shared/protocol/compare';
import { el } from '../common/dom';
import { AlignmentStrip } from './alignment-strip';
import { hoverGroup, togglePin } from './state/actions';
import { $focus } from './state/selectors';
import { $pair } from './state/store';

export class AlignmentView {
  private strip: AlignmentStrip | undefined;

  constructor() {
    $focus.listen(() => this.render());
  }

  mount(pair: CompareInit): HTMLElement {
    const al = pair.alignment;
    this.strip = al.ok
      ? new AlignmentStrip(
          al.groups,
          pair.a.tokens,
          pair.b.tokens,
          { a: pair.a.name, b: pair.b.name },
          { hover: hoverGroup, click: togglePin },
        )
      : undefined;
    if (this.strip) return this.strip.root;
    return el('p', { id: 'alignment-problem', class: 'status', role: 'alert' }, [
      al.ok ? '' : `${al.reason} Linked hover works within each side only.`,
    ]);
  }

  render(): void {
    if (!this.strip || !$pair.get()) return;
    const f = $focus.get();
    this.strip.highlight(f.group, f.keyGroups.a, f.keyGroups.b);
  }
}
