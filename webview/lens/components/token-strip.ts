// The token strip: the text's pieces (or merged words) as chips laid out like the text, the query and its
// strongest keys lit in the colours of the map, and the pointer and keyboard moves on it.
import { formatSigned } from '../../../src/shared/format';
import type { Neighbour, SignedNeighbours } from '../../../src/shared/hover';
import { isSignedKind } from '../../../src/shared/kinds';
import type { ProtocolToken, WordGroupInfo } from '../../../src/shared/protocol/lens';
import { layoutTokens } from '../../../src/shared/token-layout';
import { makeLut } from '../../common/colors';
import { $, el, revealWithin, themeKind } from '../../common/dom';
import { stripContext } from './predictions';
import { followDecision, markStrip } from './strip-marks';
import { shadeStrip } from './attribution';
import { chipColours } from '../../common/chip-colours';
import { pin, setHover, togglePin } from '../state/actions';
import { labelOf, stripTitle, $rowCount } from '../state/selectors';
import { $attribution, $hover, $init, $merged, $viewState } from '../state/store';

/** Strongest keys that get a rank badge. */
const LABELLED = 3;
/** Raw terms: keys that lower the score, shown apart in the strip's second colour. */
export const TOP_NEGATIVE = 4;

function tokenIndex(target: EventTarget | null): number | null {
  const t = target instanceof HTMLElement ? target.closest<HTMLElement>('.tok') : null;
  return t?.dataset.i !== undefined ? Number(t.dataset.i) : null;
}

export class TokenStrip {
  /** Chips lit for the current hover. */
  private lit: HTMLElement[] = [];
  /** What the lit chips show: moving along one row only moves the key marker. */
  private litKey = '';
  private keyEl: HTMLElement | null = null;
  /** What the strip shows ('' = pieces, else the groups' key), so it is rebuilt only on a change. */
  private shownKey = '';

  constructor() {
    $merged.listen(() => this.show($merged.get()));
    followDecision();
    $attribution.listen(() => shadeStrip(document.getElementById('tokens')));
  }

  /** The strip for a new result's shell: pieces, wired to the pointer and the keyboard. */
  mount(): HTMLElement {
    const box = el('div', {
      id: 'tokens',
      role: 'listbox',
      tabindex: '0',
      'aria-label': 'Tokens (arrow keys move, Enter pins, Escape clears)',
    });
    this.lit = [];
    this.litKey = '';
    this.keyEl = null;
    this.shownKey = '';
    this.fill(box, undefined);
    box.addEventListener('mouseover', (e) => {
      const i = tokenIndex(e.target);
      if (i !== null) setHover(i, null, true);
    });
    box.addEventListener('mouseleave', () => setHover(null, null));
    box.addEventListener('click', (e) => {
      const i = tokenIndex(e.target);
      if (i !== null) togglePin(i);
    });
    box.addEventListener('keydown', (e) => this.key(box, e));
    return box;
  }

  private key(box: HTMLElement, e: KeyboardEvent): void {
    if (!$init.get()) return;
    const n = $rowCount.get();
    const pinned = $viewState.get()?.pinned ?? null;
    const hoverI = $hover.get().i;
    const at = pinned ?? hoverI ?? -1;
    let next: number | null = null;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = Math.min(n - 1, at + 1);
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = Math.max(0, at - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = n - 1;
    else if (e.key === 'Enter' || e.key === ' ') {
      if (hoverI !== null) togglePin(hoverI);
      e.preventDefault();
      return;
    }
    if (next === null) return;
    e.preventDefault();
    if (pinned !== null) pin(next);
    else setHover(next, null);
    revealWithin(box, this.chip(next));
  }

  /** Shows pieces or the given groups, rebuilding the strip only when that changes. */
  private show(groups: WordGroupInfo[] | undefined): void {
    const key = groups ? groups.map((g) => g.pieces.join(',')).join('|') : '';
    const box = document.getElementById('tokens');
    if (key === this.shownKey || !box) return;
    this.shownKey = key;
    this.unlight();
    this.keyEl = null;
    this.fill(box, groups);
  }

  /** Fills the strip with the pieces, or with word groups (then `data-i` is the group index). */
  private fill(box: HTMLElement, groups: WordGroupInfo[] | undefined): void {
    const init = $init.get();
    if (!init) return;
    const items: ProtocolToken[] = groups
      ? groups.map((g, w) => ({ i: w, text: g.text, start: g.start, end: g.end, special: g.special }))
      : init.tokens;
    const rows: HTMLElement[] = [];
    for (const line of layoutTokens(init.text, items)) {
      const row = el('div', { class: 'line' });
      for (const seg of line) {
        if (seg.kind === 'gap') row.append(el('span', { class: 'gap' }, [seg.text]));
        else {
          row.append(
            el(
              'span',
              {
                class: seg.special ? 'tok special' : groups ? 'tok word' : 'tok',
                'data-i': String(seg.i),
                role: 'option',
                'aria-selected': 'false',
                title: stripTitle(seg.i),
                'data-vscode-context': stripContext(seg.i, groups),
              },
              [seg.text],
            ),
          );
        }
      }
      rows.push(row);
    }
    box.replaceChildren(...rows);
    markStrip(box, groups);
    shadeStrip(box);
  }

  chip(k: number): HTMLElement | null {
    return document.querySelector<HTMLElement>(`#tokens .tok[data-i="${k}"]`);
  }

  /** Brings row k's chip into the strip's view. */
  reveal(k: number): void {
    revealWithin($('#tokens'), this.chip(k));
  }

  unlight(): void {
    for (const t of this.lit) {
      t.classList.remove('query', 'key', 'neighbour', 'negative', 'pinned');
      // The attribution's shade comes back when the hover moves on.
      t.style.backgroundColor = t.dataset.attrBg ?? '';
      t.style.color = t.dataset.attrFg ?? '';
      t.removeAttribute('data-rank');
      t.title = stripTitle(Number(t.dataset.i));
      t.setAttribute('aria-selected', 'false');
    }
    this.lit = [];
    this.litKey = '';
    this.markKey(null);
  }

  markKey(j: number | null): void {
    const next = j === null ? null : this.chip(j);
    if (next === this.keyEl) return;
    this.keyEl?.classList.remove('key');
    next?.classList.add('key');
    this.keyEl = next;
  }

  /** Lights query i and its neighbours, unless `key` says they are already lit. */
  light(key: string, i: number, nbs: SignedNeighbours): void {
    if (key === this.litKey) return;
    this.unlight();
    this.litKey = key;
    const state = $viewState.get();
    if (!state) return;
    const signed = isSignedKind(state.term);
    const lut = makeLut(state.colorScale, signed, themeKind());
    const paint = (nb: Neighbour, rank: number, sign: -1 | 0 | 1) => {
      const t = this.chip(nb.j);
      if (!t) return;
      t.classList.add(sign < 0 ? 'negative' : 'neighbour');
      const c = chipColours(nb.strength, sign, lut);
      t.style.backgroundColor = c.background;
      t.style.color = c.color;
      // Rank badges on the strongest few (a number beside a word would overprint its neighbour's).
      if (rank < LABELLED && sign >= 0) t.dataset.rank = String(rank + 1);
      t.title = `#${nb.j} ${labelOf(nb.j)}: ${state.term} = ${formatSigned(nb.value)}${sign < 0 ? ' (lowers the score)' : ''}`;
      this.lit.push(t);
    };
    nbs.top.forEach((nb, rank) => paint(nb, rank, signed ? 1 : 0));
    nbs.negative.slice(0, TOP_NEGATIVE).forEach((nb, rank) => paint(nb, rank, -1));
    const q = this.chip(i);
    if (q) {
      q.classList.add('query');
      if (state.pinned === i) q.classList.add('pinned');
      q.setAttribute('aria-selected', 'true');
      this.lit.push(q);
    }
    if (!$hover.get().fromStrip) {
      // The pointer is on the heatmap or in the editor: bring the strongest neighbour, then the query, into view.
      const first = nbs.top[0] ? this.chip(nbs.top[0].j) : null;
      const strip = $('#tokens');
      revealWithin(strip, first);
      revealWithin(strip, q);
    }
  }
}
