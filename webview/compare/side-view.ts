// One side of the Compare Models panel: its model's name, its own layer / head / term pickers, the legend, the
// heatmap with token labels on both axes, and the token strip. Only the DOM of one pair's side: the pickers and
// the pointer go to the store's actions, and sides.ts shows here what the store holds.
import {
  kindLabel,
  kindsFor,
  kindUnits,
  type CompareKind,
  type CompareSide,
  type CompareSliceRequest,
  type Side,
} from '../../src/shared/protocol/compare';
import type { ColorScaleName } from '../../src/shared/protocol/lens';
import { pieceLabel } from '../../src/shared/token-layout';
import { decisionLine } from '../../src/shared/decision';
import { describeRange, makeLut } from '../common/colors';
import { robustRange, type Range } from '../../src/shared/value-range';
import { el, themeKind } from '../common/dom';
import { wordLabels } from '../common/figure-labels';
import { Heatmap } from '../common/heatmap';
import { paintRamp } from '../common/legend-bar';
import { hoverToken, pick, togglePin } from './state/actions';
import type { SideMatrix } from './state/store';
import { SIDE_AXES } from './sizes';

const option = (value: string, label: string) => el('option', { value }, [label]);

/** Renames the ids a Heatmap gives its parts, so that two fit in one page. */
function suffixIds(root: HTMLElement, suffix: string): void {
  for (const e of root.querySelectorAll<HTMLElement>('[id]')) e.id = `${e.id}-${suffix}`;
}

export class CompareSideView {
  readonly root: HTMLElement;
  readonly heatmap: Heatmap;
  private readonly layer: HTMLSelectElement;
  private readonly head: HTMLSelectElement;
  private readonly term: HTMLSelectElement;
  private readonly legend: HTMLElement;
  private readonly legendBar: HTMLCanvasElement;
  private readonly status: HTMLElement;
  private readonly readout: HTMLElement;
  private readonly strip: HTMLElement;
  private chips: HTMLElement[] = [];
  private words: string[] | undefined;

  constructor(
    readonly side: Side,
    readonly info: CompareSide,
    private readonly colorScale: ColorScaleName,
    /** The text both sides read: the axes name whole words from it. */
    private readonly text = '',
  ) {
    const s = side;
    this.heatmap = new Heatmap({ hover: (i, j) => hoverToken(s, i, j), click: () => togglePin() }, SIDE_AXES);
    suffixIds(this.heatmap.root, s);
    this.heatmap.canvas.classList.add('cmp-heatmap');
    this.layer = el(
      'select',
      { id: `layer-${s}`, 'aria-label': `Layer, side ${s.toUpperCase()}` },
      info.layers.map((l) => option(String(l), `Layer ${l}`)),
    );
    this.head = el(
      'select',
      { id: `head-${s}`, 'aria-label': `Head, side ${s.toUpperCase()}` },
      Array.from({ length: info.heads }, (_, h) => option(String(h), `Head ${h}`)),
    );
    this.term = el('select', { id: `term-${s}`, 'aria-label': `Term, side ${s.toUpperCase()}` });
    this.fillTerms('probs');
    this.layer.addEventListener('change', () => pick(s, { layer: Number(this.layer.value) }));
    this.head.addEventListener('change', () => pick(s, { head: Number(this.head.value) }));
    this.term.addEventListener('change', () => pick(s, { kind: this.term.value as CompareKind }));
    this.legendBar = el('canvas', { class: 'legend-bar', width: '256', height: '1', 'aria-hidden': 'true' });
    this.legend = el('span', { class: 'meta cmp-legend-text' });
    this.status = el('div', { class: 'status', role: 'alert' });
    this.readout = el('div', { class: 'cmp-readout meta', 'aria-live': 'polite' }, [
      'Hover a cell: its value here, the same characters’ value on the other side.',
    ]);
    this.strip = el('div', { class: 'cmp-strip', role: 'list', 'aria-label': `Tokens of ${info.name}` });
    this.fillStrip();
    const arch =
      info.architecture === 'bert'
        ? 'BERT: absolute positions added to the input (entangled)'
        : 'DeBERTa: relative positions in every layer (disentangled)';
    this.root = el('section', { id: `side-${s}`, class: 'cmp-side', 'aria-label': `Side ${s.toUpperCase()}: ${info.name}` }, [
      el('h2', { class: 'cmp-title' }, [
        el('span', { class: 'cmp-badge' }, [s.toUpperCase()]),
        ` ${info.name} `,
        el('span', { class: 'meta' }, [
          `${info.type} · ${info.layers.length}×${info.heads} heads · ${info.tokens.length} tokens · ${Math.round(info.ms)} ms`,
        ]),
      ]),
      el('p', { class: 'meta cmp-arch' }, [arch]),
      ...(info.decision
        ? [
            el('p', { class: 'cmp-decision', title: 'What this checkpoint’s task head decided about the text' }, [
              `Decision: ${decisionLine(info.decision)}`,
            ]),
          ]
        : []),
      el('div', { class: 'toolbar cmp-controls' }, [this.layer, this.head, el('label', {}, ['Term ', this.term])]),
      el('div', { class: 'legend cmp-legend' }, [this.legendBar, this.legend]),
      this.status,
      this.readout,
      this.heatmap.root,
      this.strip,
    ]);
  }

  /** The term picker for the chosen layer; keeps `want` when it can. */
  private fillTerms(want: CompareKind): void {
    const kinds = kindsFor(this.info, Number(this.layer.value));
    this.term.replaceChildren(...kinds.map((k) => option(k, kindLabel(this.info.architecture, k))));
    this.term.value = kinds.includes(want) ? want : 'probs';
  }

  private fillStrip(): void {
    this.chips = this.info.tokens.map((t) => {
      const chip = el(
        'span',
        { class: `tok${t.special ? ' special' : ''}`, role: 'listitem', 'data-i': String(t.i), title: `${t.i}: ${t.text}` },
        [t.special ? t.text : pieceLabel(t.text)],
      );
      chip.addEventListener('mouseenter', () => hoverToken(this.side, t.i, null));
      chip.addEventListener('mouseleave', () => hoverToken(this.side, null, null));
      chip.addEventListener('click', () => togglePin());
      return chip;
    });
    this.strip.replaceChildren(...this.chips);
  }

  /** Shows the store's pickers (the term list follows the layer: BERT's split exists in layer 0 only). */
  setPick(r: CompareSliceRequest): void {
    this.layer.value = String(r.layer);
    this.head.value = String(r.head);
    this.fillTerms(r.kind);
  }

  setStatus(message: string): void {
    this.status.textContent = message;
  }

  /** Paints a matrix the host sent. */
  show(m: SideMatrix, size: number): void {
    const { values, n } = m;
    const signed = m.kind !== 'probs';
    const range: Range = robustRange(values, signed);
    const lut = makeLut(this.colorScale, signed, themeKind());
    this.heatmap.readTheme();
    const labels = this.info.tokens.map((t) => t.text);
    this.heatmap.set({ values, n, range, lut, labels, words: (this.words ??= wordLabels(this.text, this.info.tokens)) }, size);
    this.paintLegend(lut, range, m.kind);
  }

  private paintLegend(lut: Uint8ClampedArray, range: Range, kind: CompareKind): void {
    paintRamp(this.legendBar, lut);
    this.legend.textContent =
      kind === 'probs' ? describeRange(range, kind) : `${describeRange(range, kind)} · ${kindUnits(this.info.architecture, kind)}`;
  }

  /** The hovered pair's value on this side (one line), or the hint when nothing is hovered. */
  setReadout(text: string | null): void {
    this.readout.textContent = text ?? 'Hover a cell: its value here, the same characters’ value on the other side.';
  }

  /** Lights up the query tokens and their strongest keys (rank 1 = strongest); empty lists clear. `row`: the
   *  heatmap row to outline (the one under the pointer on the hovered side; else the span's first token). */
  highlight(query: readonly number[], keys: readonly { j: number; weight: number }[], row: number | null = query[0] ?? null): void {
    for (const c of this.chips) {
      c.classList.remove('query', 'key');
      delete c.dataset.rank;
      c.style.removeProperty('--key-weight');
    }
    for (const i of query) this.chips[i]?.classList.add('query');
    keys.forEach(({ j, weight }, r) => {
      const c = this.chips[j];
      if (!c) return;
      c.classList.add('key');
      c.dataset.rank = String(r + 1);
      c.style.setProperty('--key-weight', weight.toFixed(2));
    });
    this.heatmap.setHover(row, null);
    this.root.dataset.query = query.join(',');
  }
}
