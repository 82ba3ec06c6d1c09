// The alignment strip of the Compare Models panel: one box per aligned span of characters, side A's pieces
// above side B's, so that how each tokenizer splits the same word reads at a glance. Hovering a box is the
// linked hover of its group.
import type { ProtocolToken } from '../../src/shared/protocol/lens';
import type { AlignedGroup } from '../../src/shared/token-alignment';
import { pieceLabel } from '../../src/shared/token-layout';
import { el } from '../common/dom';

export interface AlignmentEvents {
  hover(group: number | null): void;
  click(): void;
}

const pieces = (ids: readonly number[], tokens: readonly ProtocolToken[]) =>
  ids.length
    ? ids
        .map((i) => {
          const t = tokens[i];
          return t ? (t.special ? t.text : pieceLabel(t.text)) : `#${i}`;
        })
        .join(' · ')
    : '—';

export class AlignmentStrip {
  readonly root: HTMLElement;
  private boxes: HTMLElement[] = [];

  constructor(
    groups: readonly AlignedGroup[],
    tokensA: readonly ProtocolToken[],
    tokensB: readonly ProtocolToken[],
    names: { a: string; b: string },
    events: AlignmentEvents,
  ) {
    this.boxes = groups.map((g, k) => {
      const split = g.a.length !== g.b.length;
      const oneSided = !g.a.length || !g.b.length;
      const cls = ['cmp-group', g.special ? 'special' : '', split ? 'split' : '', oneSided ? 'one-sided' : ''].filter(Boolean).join(' ');
      const title = `${JSON.stringify(g.text)}: ${names.a} ${g.a.length} piece${g.a.length === 1 ? '' : 's'}, ${names.b} ${g.b.length}${oneSided ? ' (only one side covers these characters)' : ''}`;
      const box = el('span', { class: cls, role: 'listitem', 'data-g': String(k), title }, [
        el('span', { class: 'cmp-a' }, [pieces(g.a, tokensA)]),
        el('span', { class: 'cmp-b' }, [pieces(g.b, tokensB)]),
      ]);
      box.addEventListener('mouseenter', () => events.hover(k));
      box.addEventListener('mouseleave', () => events.hover(null));
      box.addEventListener('click', () => events.click());
      return box;
    });
    const splits = groups.filter((g) => !g.special && g.a.length !== g.b.length).length;
    this.root = el('section', { id: 'alignment', 'aria-label': 'Token alignment' }, [
      el('p', { class: 'meta' }, [
        `Aligned by characters: ${groups.length} spans; ${splits} split differently (highlighted). Top row: A's pieces, bottom row: B's. Hover a span, a token or a heatmap row: both sides light up.`,
      ]),
      el('div', { class: 'cmp-groups', role: 'list' }, this.boxes),
    ]);
  }

  /** Marks the hovered group and the groups holding the keys each side attends to. */
  highlight(group: number | null, keyGroupsA: readonly number[], keyGroupsB: readonly number[]): void {
    for (const b of this.boxes) b.classList.remove('focus', 'key-a', 'key-b');
    if (group !== null) this.boxes[group]?.classList.add('focus');
    for (const g of keyGroupsA) this.boxes[g]?.classList.add('key-a');
    for (const g of keyGroupsB) this.boxes[g]?.classList.add('key-b');
    if (group !== null) {
      const box = this.boxes[group];
      const list = box?.parentElement;
      if (box && list) {
        const b = list.getBoundingClientRect();
        const c = box.getBoundingClientRect();
        if (c.top < b.top || c.bottom > b.bottom) list.scrollTop += c.top - b.top - 4;
      }
    }
  }
}
