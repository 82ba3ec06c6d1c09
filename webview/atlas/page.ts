// The atlas page's layout and its interactions: the pickers, the scatter and its legend, the hovered head's profile,
// the selected head's top examples, and the table. State is small (choices, hovered, selected, sort): kept here.
import { ATLAS_METRICS, type AtlasMetric, type AtlasToHost, type AtlasView } from '../../src/shared/atlas';
import { $, el, themeKind } from '../common/dom';
import {
  dominantTerm,
  formatMetric,
  metricsPresent,
  METRIC_LABELS,
  pairAtlases,
  sortRows,
  TERMS,
  type AtlasRow,
  type Sort,
  type SortKey,
} from './atlas-model';
import { atlasFigureName, atlasFigureSvg, type AtlasFigureSpec } from './atlas-figure';
import { atlasFigureCanvas } from './atlas-figure-canvas';
import { Scatter } from './scatter';

type ColourBy = 'layer' | 'term';
/** The same three colours the lens panel's Distance view gives the terms. */
const TERM_COLOURS = { c2c: '#8c8c8c', c2p: '#d95f02', p2c: '#1b9e77' } as const;
/** The exported figure: one column of a two-column page, at print resolution. */
const FIGURE_CM = 12;
const FIGURE_DPI = 300;

export class AtlasPage {
  private atlases: AtlasView[] = [];
  private rows: AtlasRow[] = [];
  private paired = false;
  private metrics: AtlasMetric[] = [];
  private x: AtlasMetric = 'mean_distance';
  private y: AtlasMetric = 'entropy';
  private colourBy: ColourBy = 'term';
  private sort: Sort = { key: 'layer', descending: false };
  private hovered = -1;
  private selected = -1;
  private readonly scatter = new Scatter();
  private readonly profile = el('div', { class: 'atlas-profile', id: 'atlas-profile' });
  private readonly examples = el('div', { class: 'atlas-examples', id: 'atlas-examples' });
  private readonly table = el('table', { class: 'atlas-table', id: 'atlas-table' });
  private readonly legend = el('div', { class: 'atlas-legend', id: 'atlas-legend' });
  private readonly title = el('div', { class: 'atlas-title' });
  private readonly pickers = el('div', { class: 'atlas-pickers' });
  private readonly plot = el('div', { class: 'atlas-plot', id: 'atlas-plot' });

  constructor(private readonly post: (m: AtlasToHost) => void) {
    this.plot.append(this.scatter.base, this.scatter.overlay);
    this.plot.addEventListener('pointermove', (e) => {
      const r = this.scatter.overlay.getBoundingClientRect();
      this.hover(this.scatter.headAt(e.clientX - r.left, e.clientY - r.top));
    });
    this.plot.addEventListener('pointerleave', () => this.hover(-1));
    this.plot.addEventListener('click', (e) => {
      const r = this.scatter.overlay.getBoundingClientRect();
      const k = this.scatter.headAt(e.clientX - r.left, e.clientY - r.top);
      if (k >= 0) this.select(k);
    });
    new ResizeObserver(() => this.paint()).observe(this.plot);
    new MutationObserver(() => this.paint()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  show(atlases: AtlasView[]): void {
    this.atlases = atlases;
    const { rows, paired } = pairAtlases(atlases[0]!, atlases[1]);
    this.rows = rows;
    this.paired = paired;
    this.metrics = metricsPresent(atlases, ATLAS_METRICS);
    if (!this.metrics.includes(this.x)) this.x = this.metrics[0] ?? 'entropy';
    if (!this.metrics.includes(this.y)) this.y = this.metrics[1] ?? this.x;
    if (!this.metrics.some((m) => m.endsWith('_share'))) this.colourBy = 'layer';
    [this.hovered, this.selected] = [-1, -1];
    const app = $('#app');
    app.replaceChildren(
      this.title,
      this.pickers,
      el('div', { class: 'atlas-top' }, [
        el('div', { class: 'atlas-left' }, [this.plot, this.legend]),
        el('div', { class: 'atlas-side' }, [this.profile, this.examples]),
      ]),
      el('div', { class: 'atlas-table-box' }, [this.table]),
    );
    app.dataset.state = 'ready';
    this.renderTitle();
    this.renderPickers();
    this.renderLegend();
    this.renderTable();
    this.renderProfile();
    this.renderExamples();
    this.paint();
  }

  private renderTitle(): void {
    const [a, b] = this.atlases;
    const line = (v: AtlasView) => `${v.name}: ${v.layers} layers × ${v.heads} heads, ${v.texts} texts, ${v.tokens} tokens`;
    this.title.replaceChildren(
      el('div', {}, [line(a!)]),
      ...(b
        ? [
            el('div', {}, [`beside: ${line(b)}`]),
            el('div', { class: 'meta' }, [
              this.paired
                ? 'Arrows go from the first atlas to the second; the table shows second − first (sort a column: the heads that moved most first).'
                : 'The two models have different numbers of layers or heads: no head pairs, the table shows the first atlas.',
            ]),
          ]
        : []),
    );
  }

  private renderPickers(): void {
    const select = (id: string, label: string, options: [string, string][], value: string, on: (v: string) => void) => {
      const s = el(
        'select',
        { id },
        options.map(([v, t]) => el('option', { value: v }, [t])),
      );
      s.value = value;
      s.addEventListener('change', () => on(s.value));
      return el('label', {}, [`${label} `, s]);
    };
    const metricOptions = this.metrics.map((m): [string, string] => [m, METRIC_LABELS[m]]);
    this.pickers.replaceChildren(
      select('atlas-x', 'x', metricOptions, this.x, (v) => {
        this.x = v as AtlasMetric;
        this.paint();
      }),
      select('atlas-y', 'y', metricOptions, this.y, (v) => {
        this.y = v as AtlasMetric;
        this.paint();
      }),
      select(
        'atlas-colour',
        'colour by',
        this.metrics.some((m) => m.endsWith('_share'))
          ? [
              ['term', 'dominant term'],
              ['layer', 'layer'],
            ]
          : [['layer', 'layer']],
        this.colourBy,
        (v) => {
          this.colourBy = v as ColourBy;
          this.renderLegend();
          this.paint();
        },
      ),
      ...(['png', 'svg'] as const).map((format) => {
        const b = el(
          'button',
          { id: `atlas-export-${format}`, type: 'button', title: `The scatter as a figure (${format.toUpperCase()})` },
          [`Export ${format.toUpperCase()}`],
        );
        b.addEventListener('click', () => this.exportFigure(format));
        return b;
      }),
    );
  }

  /** The scatter as the panel shows it (axes, colours, arrows), with its title, legend and caption. */
  figureSpec(): AtlasFigureSpec {
    const [a, b] = this.atlases;
    const line = (v: AtlasView) => `${v.name} (${v.layers} × ${v.heads} heads, ${v.texts} texts, ${v.tokens} tokens)`;
    const byTerm = this.colourBy === 'term';
    const L = a!.layers;
    const shownLayers = [...new Set([0, Math.round((L - 1) / 3), Math.round((2 * (L - 1)) / 3), L - 1])];
    const colourNote = byTerm
      ? 'Colour: the dominant term, the largest mean share of |c2c|, |c2p|, |p2c| over every (query, key) cell.'
      : 'Colour: layer.';
    return {
      title: this.paired && b ? `Head atlas: ${line(a!)} → ${line(b)}` : `Head atlas: ${line(a!)}`,
      caption: [
        `Each point is one attention head; each metric is averaged over every token of the corpus, specials included.`,
        colourNote,
        this.paired ? 'Arrows go from the first atlas to the second (the heads that moved are the long ones).' : '',
      ]
        .filter((c) => c)
        .join(' '),
      xLabel: METRIC_LABELS[this.x],
      yLabel: METRIC_LABELS[this.y],
      points: this.rows.map((r) => {
        const c = this.colour(r, 'a');
        return {
          x: r.a.metrics[this.x],
          y: r.a.metrics[this.y],
          ...(this.paired && r.b ? { bx: r.b.metrics[this.x], by: r.b.metrics[this.y] } : {}),
          colour: c.startsWith('var(') ? undefined : c,
        };
      }),
      legendTitle: byTerm ? 'dominant term' : 'layer',
      legend: byTerm
        ? TERMS.map((t) => ({ colour: TERM_COLOURS[t], label: t }))
        : shownLayers.map((l) => ({ colour: this.layerColour(l), label: String(l) })),
      widthCm: FIGURE_CM,
      dpi: FIGURE_DPI,
      theme: themeKind(),
    };
  }

  private exportFigure(format: 'png' | 'svg'): void {
    const spec = this.figureSpec();
    const name = atlasFigureName(this.atlases[0]!.name, this.x, this.y, format);
    const image = format === 'svg' ? { svg: atlasFigureSvg(spec) } : { dataUrl: atlasFigureCanvas(spec).toDataURL('image/png') };
    this.post({ type: 'export', format, name, ...image });
  }

  private layerColour(layer: number): string {
    const L = Math.max(1, this.atlases[0]!.layers - 1);
    return `hsl(${Math.round(260 - (260 * layer) / L)}, 70%, ${themeKind() === 'dark' ? 62 : 42}%)`;
  }

  private colour = (r: AtlasRow, side: 'a' | 'b'): string => {
    if (this.colourBy === 'layer') return this.layerColour(r.layer);
    const t = dominantTerm((side === 'b' && r.b ? r.b : r.a).metrics);
    return t ? TERM_COLOURS[t] : 'var(--vscode-foreground)';
  };

  private renderLegend(): void {
    const chip = (colour: string, text: string) => {
      const c = el('span', { class: 'atlas-chip' });
      c.style.background = colour;
      return el('span', { class: 'atlas-legend-item' }, [c, text]);
    };
    if (this.colourBy === 'term') this.legend.replaceChildren('dominant term: ', ...TERMS.map((t) => chip(TERM_COLOURS[t], t)));
    else {
      const L = this.atlases[0]!.layers;
      const shown = [...new Set([0, Math.round((L - 1) / 3), Math.round((2 * (L - 1)) / 3), L - 1])];
      this.legend.replaceChildren('layer: ', ...shown.map((l) => chip(this.layerColour(l), String(l))));
    }
  }

  private paint(): void {
    if (!this.rows.length) return;
    const w = Math.max(240, this.plot.clientWidth);
    const h = Math.max(200, Math.min(420, Math.round(w * 0.62)));
    this.scatter.paint(this.rows, this.paired, { x: this.x, y: this.y, colour: this.colour }, w, h);
    this.scatter.mark(this.hovered, this.selected);
  }

  private hover(k: number): void {
    if (k === this.hovered) return;
    // What a hover costs in all (the overlay, the table row, the profile): the E2E logs it.
    const t0 = performance.now();
    this.hovered = k;
    this.scatter.mark(this.hovered, this.selected);
    for (const tr of this.table.querySelectorAll('tr.hovered')) tr.classList.remove('hovered');
    if (k >= 0) this.table.querySelector(`tr[data-k="${k}"]`)?.classList.add('hovered');
    this.renderProfile();
    this.plot.dataset.repaintMs = (performance.now() - t0).toFixed(2);
  }

  private select(k: number): void {
    this.selected = k;
    this.scatter.mark(this.hovered, this.selected);
    for (const tr of this.table.querySelectorAll('tr.selected')) tr.classList.remove('selected');
    this.table.querySelector(`tr[data-k="${k}"]`)?.classList.add('selected');
    this.renderExamples();
  }

  private renderProfile(): void {
    const r = this.rows[this.hovered >= 0 ? this.hovered : this.selected];
    if (!r) {
      this.profile.replaceChildren(
        el('p', { class: 'meta' }, ['Hover a head (scatter or table) for its profile; click it for its top examples.']),
      );
      return;
    }
    const term = dominantTerm(r.a.metrics);
    const cells = this.metrics.map((m) =>
      el('tr', {}, [
        el('th', {}, [METRIC_LABELS[m]]),
        el('td', {}, [formatMetric(r.a.metrics[m])]),
        ...(this.paired ? [el('td', {}, [formatMetric(r.b?.metrics[m])]), el('td', {}, [formatMetric(r.delta[m], true)])] : []),
      ]),
    );
    this.profile.replaceChildren(
      el('h3', {}, [`Layer ${r.layer}, head ${r.head}${term ? ` · mostly ${term}` : ''}`]),
      el('table', { class: 'atlas-profile-table' }, [
        ...(this.paired ? [el('tr', {}, [el('th', {}), el('th', {}, ['first']), el('th', {}, ['second']), el('th', {}, ['Δ'])])] : []),
        ...cells,
      ]),
    );
  }

  private renderExamples(): void {
    const r = this.rows[this.selected];
    if (!r) {
      this.examples.replaceChildren();
      return;
    }
    const list = (atlas: number, top: AtlasRow['a']['top']) =>
      el(
        'ol',
        { class: 'atlas-example-list' },
        top.map((t, index) => {
          const li = el('li', { class: 'atlas-example', tabindex: '0', title: `Open ${t.file} here and in the lens panel` }, [
            el('span', { class: 'atlas-prob' }, [t.prob.toFixed(3)]),
            ' ',
            el('span', { class: 'atlas-query' }, [visible(t.query)]),
            ' → ',
            el('span', { class: 'atlas-key' }, [visible(t.key)]),
            el('div', { class: 'atlas-context meta' }, [`${t.file}: ${t.context}`]),
          ]);
          const open = () => this.post({ type: 'open', atlas, layer: r.layer, head: r.head, index });
          li.addEventListener('click', open);
          li.addEventListener('keydown', (e) => {
            if (e.key === 'Enter') open();
          });
          return li;
        }),
      );
    const examples = (atlas: number, top: AtlasRow['a']['top']) =>
      top.length ? list(atlas, top) : el('p', { class: 'meta' }, ['No pair of ordinary tokens in this atlas.']);
    this.examples.replaceChildren(
      el('h3', {}, [`Top examples: layer ${r.layer}, head ${r.head}`]),
      examples(0, r.a.top),
      ...(this.paired && r.b ? [el('h3', {}, ['Second atlas']), examples(1, r.b.top)] : []),
    );
  }

  private renderTable(): void {
    const keys: SortKey[] = ['layer', 'head', ...this.metrics];
    const head = el(
      'tr',
      {},
      keys.map((k) => {
        const label = k === 'layer' || k === 'head' ? k : `${this.paired ? 'Δ ' : ''}${METRIC_LABELS[k]}`;
        const arrow = this.sort.key === k ? (this.sort.descending ? ' ▼' : ' ▲') : '';
        const th = el('th', { 'data-key': k, tabindex: '0', title: 'Sort by this column (again: the other way)' }, [label + arrow]);
        const sortBy = () => {
          this.sort = { key: k, descending: this.sort.key === k ? !this.sort.descending : k !== 'layer' && k !== 'head' };
          this.renderTable();
        };
        th.addEventListener('click', sortBy);
        th.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') sortBy();
        });
        return th;
      }),
    );
    const index = new Map(this.rows.map((r, k) => [r, k]));
    const body = sortRows(this.rows, this.sort, this.paired).map((r) => {
      const k = index.get(r)!;
      const tr = el('tr', { 'data-k': String(k), class: k === this.selected ? 'selected' : '' }, [
        el('td', {}, [String(r.layer)]),
        el('td', {}, [String(r.head)]),
        ...this.metrics.map((m) => el('td', {}, [this.paired ? formatMetric(r.delta[m], true) : formatMetric(r.a.metrics[m])])),
      ]);
      tr.addEventListener('pointerenter', () => this.hover(k));
      tr.addEventListener('click', () => this.select(k));
      return tr;
    });
    this.table.replaceChildren(el('thead', {}, [head]), el('tbody', {}, body));
  }
}

/** A token's text as shown: blanks made visible (a SentencePiece word start alone is a space). */
function visible(text: string): string {
  return text.trim() ? text : '␣';
}
