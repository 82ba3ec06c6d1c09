// The toolbar and legend controls: each change becomes a state update, and every state change is shown back
// in them (and in which sections and controls the current view uses).
import { isSignedKind, type MatrixKind } from '../../../src/shared/kinds';
import { ANALYSIS_VIEWS, EXPORT_FORMATS, type MergeModeName } from '../../../src/shared/protocol/lens';
import { $ } from '../../common/dom';
import { showExportForm, showFigureForm } from './export-form';
import { scalingFor, VIEW_CONTROLS, type ViewState } from '../state/nav';
import { act, update } from '../state/actions';
import { isAnalysis } from '../state/selectors';
import { $init, $viewState } from '../state/store';
import { figureSize, type ViewExport } from './export';
import { post } from './host';

/** Wires the controls of a freshly built shell. */
export function wireControls(exporter: ViewExport): void {
  const term = $<HTMLSelectElement>('#term');
  const layer = $<HTMLSelectElement>('#layer');
  const head = $<HTMLSelectElement>('#head');
  const scale = $<HTMLSelectElement>('#color-scale');
  term.addEventListener('change', () => update({ term: term.value as MatrixKind }));
  layer.addEventListener('change', () => update({ layer: Number(layer.value) }));
  head.addEventListener('change', () =>
    head.value === 'mean' || head.value === 'max' ? update({ headAgg: head.value }) : update({ head: Number(head.value), headAgg: null }),
  );
  const discount = $<HTMLInputElement>('#discount-special');
  discount.addEventListener('change', () => update({ discountSpecial: discount.checked }));
  const mergeBox = $<HTMLInputElement>('#merge-words');
  const mergeMode = $<HTMLSelectElement>('#merge-mode');
  // A pin names a row of what is on screen (piece or word), so switching between them drops it.
  mergeBox.addEventListener('change', () => update({ merge: mergeBox.checked ? (mergeMode.value as MergeModeName) : null, pinned: null }));
  mergeMode.addEventListener('change', () => {
    if (mergeBox.checked) update({ merge: mergeMode.value as MergeModeName, pinned: null });
  });
  for (const f of EXPORT_FORMATS) {
    $(`#export-${f}`).addEventListener('click', () => {
      const init = $init.get();
      const state = $viewState.get();
      if (f === 'png' || f === 'svg')
        return showFigureForm($('#export-form'), f, figureSize(), (size) => exporter.send(f, undefined, size));
      if (!init || !state) return exporter.send(f);
      showExportForm($('#export-form'), f, init.model, init.tokens.length, { layer: state.layer, term: state.term }, (c) =>
        post({ type: 'export', ...c }),
      );
    });
  }
  for (const v of ANALYSIS_VIEWS) $(`#view-${v}`).addEventListener('click', () => update({ view: v }));
  scale.addEventListener('change', () => update({ colorScale: scale.value as ViewState['colorScale'] }));
  $('#layer-prev').addEventListener('click', () => act({ type: 'layer', delta: -1 }));
  $('#layer-next').addEventListener('click', () => act({ type: 'layer', delta: 1 }));
  $('#head-prev').addEventListener('click', () => act({ type: 'head', delta: -1 }));
  $('#head-next').addEventListener('click', () => act({ type: 'head', delta: 1 }));
  $('#view-heatmap').addEventListener('click', () => update({ view: 'heatmap' }));
  $('#view-heads').addEventListener('click', () => update({ view: 'heads' }));
  const scalingSel = $<HTMLSelectElement>('#scaling');
  scalingSel.addEventListener('change', () =>
    update({ scaling: scalingSel.value === 'auto' ? undefined : (scalingSel.value as ViewState['scaling']) }),
  );
}

/** Shows the state in the controls and the sections, whenever it changes (once a shell is built). */
export function syncControls(): void {
  const state = $viewState.get();
  if (!state || !document.getElementById('term')) return;
  $<HTMLSelectElement>('#term').value = state.term;
  $<HTMLSelectElement>('#layer').value = String(state.layer);
  $<HTMLSelectElement>('#head').value = state.headAgg ?? String(state.head);
  const discount = $<HTMLInputElement>('#discount-special');
  discount.checked = !!state.discountSpecial;
  // Word merging pools raw slices (or head means); the special-token discount does not apply to it.
  discount.disabled = state.term !== 'probs' || !!state.merge;
  $<HTMLSelectElement>('#color-scale').value = state.colorScale;
  // Log colours exist for probabilities only: on a signed term the option is off and the picker shows what is drawn.
  const scaling = $<HTMLSelectElement>('#scaling');
  const log = scaling.querySelector<HTMLOptionElement>('option[value="log"]');
  if (log) log.disabled = isSignedKind(state.term);
  scaling.value = state.scaling === undefined ? 'auto' : scalingFor(state.scaling, state.term);
  $<HTMLInputElement>('#merge-words').checked = !!state.merge;
  if (state.merge) $<HTMLSelectElement>('#merge-mode').value = state.merge;
  const heat = state.view === 'heatmap';
  const applies = new Set(VIEW_CONTROLS[state.view]);
  for (const c of ['term', 'layer', 'head', 'discount', 'merge', 'colours'] as const) $(`#${c}-group`).hidden = !applies.has(c);
  $('#heatmap-view').hidden = !heat;
  $('#heads-view').hidden = state.view !== 'heads';
  $('#analysis-view').hidden = !isAnalysis(state.view);
  $('#legend').hidden = !applies.has('legend');
  // The scale's description: under the heatmap (the map starts higher), above the head grid.
  const label = $('#legend-label');
  const home = heat ? $('#heatmap-view') : $('#legend');
  if (label.parentElement !== home) home.append(label);
  // Analysis views have their own readout under their pictures.
  $('#readout').hidden = isAnalysis(state.view);
  for (const v of ['heatmap', 'heads', ...ANALYSIS_VIEWS]) $(`#view-${v}`).setAttribute('aria-selected', String(state.view === v));
  $('#app').dataset.view = state.view;
}

export function followViewState(): void {
  $viewState.listen(syncControls);
}
