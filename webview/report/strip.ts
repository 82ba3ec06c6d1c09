// The report's token strip: the text laid out as the lens panel lays it out (src/shared/token-layout.ts), each
// token a chip; hovering a row shades every chip in the colour its heatmap cell has in that row.
import type { ProtocolToken } from '../../src/shared/protocol/token';
import { layoutTokens } from '../../src/shared/token-layout';
import { luminance } from '../common/chip-colours';
import { colorOf, cssRgb } from '../common/colors';
import { type Range } from '../../src/shared/value-range';
import { el, revealWithin } from '../common/dom';

export class ReportStrip {
  private readonly chips: HTMLElement[] = [];
  /** What the chips show now: moving along one row of the map leaves them as they are. */
  private last: { i: number | null; shown?: Float32Array; lut?: Uint8ClampedArray; pinned: number | null } = { i: null, pinned: null };

  constructor(
    readonly box: HTMLElement,
    text: string,
    tokens: readonly ProtocolToken[],
    titleOf: (i: number) => string,
    onHover: (i: number | null) => void,
    onClick: (i: number) => void,
  ) {
    const rows: HTMLElement[] = [];
    for (const line of layoutTokens(text, tokens)) {
      const row = el('div', { class: 'line' });
      for (const seg of line) {
        if (seg.kind === 'gap') {
          row.append(el('span', { class: 'gap' }, [seg.text]));
          continue;
        }
        const chip = el(
          'span',
          { class: seg.special ? 'tok special' : 'tok', 'data-i': String(seg.i), tabindex: '-1', title: titleOf(seg.i) },
          [seg.text],
        );
        this.chips[seg.i] = chip;
        row.append(chip);
      }
      rows.push(row);
    }
    box.replaceChildren(...rows);
    const indexOf = (e: Event) => {
      const t = e.target instanceof HTMLElement ? e.target.closest<HTMLElement>('.tok') : null;
      return t?.dataset.i === undefined ? null : Number(t.dataset.i);
    };
    box.addEventListener('mouseover', (e) => {
      const i = indexOf(e);
      if (i !== null) onHover(i);
    });
    box.addEventListener('mouseleave', () => onHover(null));
    box.addEventListener('click', (e) => {
      const i = indexOf(e);
      if (i !== null) onClick(i);
    });
  }

  /** Every chip in its cell's colour in row i of `shown` (the heatmap's values as painted); none for null.
   *  `reveal`: scroll the query's chip into view (the pointer is on the map, not on the strip). */
  shade(
    i: number | null,
    m: { shown: Float32Array; n: number; range: Range; lut: Uint8ClampedArray },
    pinned: number | null,
    reveal: boolean,
  ): void {
    const { shown, n, range, lut } = m;
    const l = this.last;
    if (l.i === i && l.shown === shown && l.lut === lut && l.pinned === pinned) return;
    this.last = { i, shown, lut, pinned };
    this.chips.forEach((chip, j) => {
      if (!chip) return;
      chip.classList.toggle('query', j === i);
      chip.classList.toggle('pinned', j === i && i === pinned);
      if (i === null) {
        chip.style.backgroundColor = '';
        chip.style.color = '';
        return;
      }
      const c = colorOf(shown[i * n + j] ?? NaN, range, lut);
      chip.style.backgroundColor = cssRgb(c);
      // Black or white text, whichever reads on the colour (the panel's chips' rule).
      chip.style.color = luminance(c) > 0.179 ? '#000' : '#fff';
    });
    // Within the strip only: the page itself must not jump under the pointer.
    if (i !== null && reveal) revealWithin(this.box, this.chips[i] ?? null);
  }
}
