// The panel's layout for a result: toolbar, export form, token strip, predictions, readout, status line, legend
// and the three view sections. Only the DOM: controls.ts wires and syncs the toolbar, each view fills its section.
import { KIND_LABELS } from '../../../src/shared/kinds';
import { emdQueryText, layerLabel, pickerLayers } from '../../../src/shared/emd-layers';
import { ANALYSIS_VIEWS, EXPORT_FORMATS, type ViewInit } from '../../../src/shared/protocol/lens';
import { compareModelsButton } from './compare-button';
import { $, el } from '../../common/dom';
import { SCALING_CHOICES } from '../../../src/shared/row-scale';
import { VIEW_TITLES } from '../views/view-captions';
import { $kinds } from '../state/selectors';
import { exportTitle } from './export';
import { post } from './host';
import { moreToggle, syncMoreToggle } from './toolbar-more';

/** The parts other components own, placed into the shell. */
export interface ShellParts {
  heatmap: HTMLElement;
  decision: HTMLElement;
  tokens: HTMLElement;
  predictions: HTMLElement;
  /** The EMD pass's query above its heatmap (./emd-query.ts). */
  emdQuery: HTMLElement;
}

export function buildShell(init: ViewInit, parts: ShellParts): void {
  const m = init.model;
  const option = (value: string, label: string) => el('option', { value }, [label]);
  const term = el(
    'select',
    { id: 'term', 'aria-label': 'Term' },
    // The scores' long name sets the closed picker's width: a shorter one here (the whole name is its title) keeps
    // term, layer and head on one row of a side panel.
    $kinds
      .get()
      .map((k) => el('option', { value: k, title: KIND_LABELS[k] }, [k === 'scores' ? 'scores (Σ terms / scale)' : KIND_LABELS[k]])),
  );
  const layer = el(
    'select',
    { id: 'layer', 'aria-label': 'Layer' },
    pickerLayers(m).map((l) => {
      // The Enhanced Mask Decoder's passes follow the encoder's layers, named as what they are.
      const o = option(String(l), layerLabel(m, l));
      const what = emdQueryText(m, l);
      if (what) o.title = what;
      return o;
    }),
  );
  const head = el('select', { id: 'head', 'aria-label': 'Head' }, [
    ...Array.from({ length: m.heads }, (_, h) => option(String(h), `Head ${h}`)),
    option('mean', 'Mean of heads'),
    option('max', 'Max of heads'),
  ]);
  const discount = el('input', {
    id: 'discount-special',
    type: 'checkbox',
    'aria-label': 'Discount special tokens ([CLS], [SEP]) in probs',
  });
  const scale = el(
    'select',
    {
      id: 'color-scale',
      'aria-label': 'Colour scale',
      title: 'Colour scale: the theme’s (diverging for signed terms, sequential for probs) or viridis',
    },
    [option('diverging', 'Theme colours'), option('viridis', 'Viridis')],
  );
  // Short in the toolbar (it wraps, never cut); the whole line in its title.
  const about = `${m.name} · ${m.type} · ${m.layers.length}×${m.heads} heads · ${init.tokens.length} tokens · ${m.executionProvider} · ${Math.round(init.ms)} ms`;
  const aboutShort = `${m.name} · ${init.tokens.length} tokens · ${Math.round(init.ms)} ms`;
  const btn = (id: string, label: string, title: string) => el('button', { id, type: 'button', title, 'aria-label': title }, [label]);
  const toolbar = el('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'View controls' }, [
    el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'View' }, [
      el('button', { id: 'view-heatmap', type: 'button', role: 'tab', 'aria-controls': 'heatmap-view' }, ['Heatmap']),
      el('button', { id: 'view-heads', type: 'button', role: 'tab', 'aria-controls': 'heads-view' }, ['Compare heads']),
      ...ANALYSIS_VIEWS.map((v) =>
        el('button', { id: `view-${v}`, type: 'button', role: 'tab', 'aria-controls': 'analysis-view' }, [VIEW_TITLES[v]]),
      ),
    ]),
    el('label', { id: 'term-group', title: 'Term' }, [term]),
    el('span', { class: 'group', id: 'layer-group' }, [
      btn('layer-prev', '‹', 'Previous layer ([)'),
      layer,
      btn('layer-next', '›', 'Next layer (])'),
    ]),
    el('span', { class: 'group', id: 'head-group' }, [
      btn('head-prev', '‹', 'Previous head (,)'),
      head,
      btn('head-next', '›', 'Next head (.)'),
    ]),
    // The controls a reader rarely changes fold away behind one button (its state is remembered).
    moreToggle(),
    // Always laid out (only its visibility changes), so showing it never reflows the toolbar.
    el('span', { id: 'busy', class: 'meta busy', role: 'status' }, ['computing…']),
    el('span', { id: 'meta', class: 'meta', title: about }, [aboutShort]),
    el('span', { class: 'group more-controls', id: 'more-controls', role: 'group', 'aria-label': 'More controls' }, [
      el('label', { id: 'discount-group', title: 'Zero the [CLS]/[SEP] key columns of probs and renormalise each row' }, [
        discount,
        ' no specials',
      ]),
      el('span', { class: 'group', id: 'merge-group' }, [
        el(
          'label',
          { title: 'Heatmap rows/columns and the token strip show whole words: rows average a word’s pieces, columns add them up (probs)' },
          [el('input', { id: 'merge-words', type: 'checkbox', 'aria-label': 'Merge pieces into words' }), ' merge into'],
        ),
        el('select', { id: 'merge-mode', 'aria-label': 'Merge pieces into' }, [
          option('words', 'words'),
          option('identifiers', 'identifiers'),
        ]),
      ]),
      el('label', { id: 'colours-group' }, [scale]),
      el('span', { class: 'group', id: 'export-group', role: 'group', 'aria-label': 'Export' }, [
        'Export ',
        ...EXPORT_FORMATS.map((f) => btn(`export-${f}`, f.toUpperCase(), exportTitle(f))),
      ]),
      compareModelsButton(btn, post),
    ]),
  ]);

  const scaling = el(
    'select',
    { id: 'scaling', 'aria-label': 'Colour mapping', title: 'How values map to colours' },
    SCALING_CHOICES.map(([v, label]) => option(v, label)),
  );
  // The legend sits above the maps (heatmap and head grid alike), so it is on screen whenever a map is.
  const legend = el('div', { id: 'legend', class: 'legend' }, [
    el('label', {}, ['Colour ', scaling]),
    el('span', { class: 'legend-scale' }, [
      el('span', { id: 'legend-min' }),
      el('canvas', { id: 'legend-bar', width: '256', height: '1', 'aria-hidden': 'true' }),
      el('span', { id: 'legend-max' }),
    ]),
    el('span', { id: 'legend-label', class: 'meta' }),
  ]);
  const heatmapView = el('section', { id: 'heatmap-view', role: 'tabpanel', 'aria-label': 'Heatmap' }, [
    parts.emdQuery,
    parts.heatmap,
    el('p', { id: 'merge-caption', class: 'meta', hidden: '' }),
  ]);
  const headsView = el('section', { id: 'heads-view', role: 'tabpanel', 'aria-label': 'Compare heads', hidden: '' }, [
    el('h2', {}, ['Layer × head overview']),
    el('p', { id: 'overview-caption', class: 'meta' }),
    el('div', { id: 'overview-box' }, [
      el('canvas', {
        id: 'overview',
        tabindex: '0',
        role: 'img',
        'aria-label': 'Overview: rows are layers, columns are heads. Arrow keys move, Enter opens.',
      }),
    ]),
    el('h2', { id: 'grid-title' }, ['Heads']),
    el('div', { id: 'head-grid', class: 'head-grid' }),
    el('h2', {}, ['Side by side']),
    el('p', { id: 'compare-hint', class: 'meta' }, ['Tick “compare” on two or more heads to see them side by side; hover is linked.']),
    el('div', { id: 'compare', class: 'compare' }),
  ]);

  const analysisView = el('section', { id: 'analysis-view', role: 'tabpanel', 'aria-label': 'Analysis', hidden: '' });
  const app = $('#app');
  app.replaceChildren(
    toolbar,
    el('div', { id: 'export-form', class: 'export-form', role: 'dialog', 'aria-label': 'Export choices', hidden: '' }),
    parts.decision,
    // Two columns in a wide panel's Heatmap tab (the text and readout beside the map, lens.css); one flow otherwise.
    el('div', { class: 'lens-body' }, [
      el('div', { class: 'side-col' }, [
        parts.tokens,
        parts.predictions,
        el('div', { id: 'readout', class: 'readout', 'aria-live': 'polite', role: 'status' }, ['Hover a token or a heatmap cell.']),
      ]),
      el('div', { class: 'main-col' }, [
        el('div', { id: 'status', class: 'status', role: 'alert' }),
        legend,
        heatmapView,
        headsView,
        analysisView,
      ]),
    ]),
    el('p', { class: 'keys meta' }, ['Keys: [ ] layer · , . head · 1–5 term · h heatmap · g heads · Esc clear']),
  );
  syncMoreToggle();
  app.dataset.state = 'ready';
  // Which result the page shows (the E2E tests wait for a new one).
  app.dataset.result = String(init.resultId);
  const bar = $<HTMLCanvasElement>('#legend-bar');
  bar.style.width = '110px';
  bar.style.height = '10px';
}
