// Values derived from the store's atoms: `computed` selectors (worked out once per change) and the lookups
// built on them.
import { computed, keepMount } from 'nanostores';
import { type MatrixKind, viewKinds } from '../../../src/shared/kinds';
import { ANALYSIS_VIEWS, type AnalysisView, type ViewInit } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { tokenScoresLine } from '../../../src/shared/decision';
import type { ViewState } from './nav';
import { $decision, $init, $merged, $viewState } from './store';

/** The matrix kinds this model's pickers offer, in picker order. */
export const $kinds = computed($init, (init): MatrixKind[] => (init ? viewKinds(init.model) : []));

/** Rows on screen in the heatmap and the strip: groups when merged, else tokens. */
export const $rowCount = computed([$init, $merged], (init, merged) => (merged ? merged.length : (init?.tokens.length ?? 0)));

/** Strip / readout label of each row: a piece, or a merged word. */
export const $rowLabels = computed([$init, $merged], (init, merged) =>
  merged ? merged.map((g) => g.text) : (init?.tokens ?? []).map((t) => (t.special ? t.text : pieceLabel(t.text))),
);

/** Mean/max over heads, special tokens discounted or words merged: the host reduces, the view only paints. */
export const $aggregated = computed(
  [$viewState, $merged],
  (s, merged) => !!s && (!!s.headAgg || (!!s.discountSpecial && s.term === 'probs') || !!merged),
);

// Mounted for the page's life: an unmounted selector would subscribe to its atoms (and set an unmount timer)
// on every get().
for (const $s of [$kinds, $rowCount, $rowLabels, $aggregated]) keepMount($s);

export function isAnalysis(v: string): v is AnalysisView {
  return (ANALYSIS_VIEWS as readonly string[]).includes(v);
}

/** Label of row k (empty past the end). */
export function labelOf(k: number): string {
  return $rowLabels.get()[k] ?? '';
}

/** The strip's tooltip of row k: a piece, or a word with its pieces. */
export function stripTitle(k: number): string {
  const g = $merged.get()?.[k];
  const tokens = $init.get()?.tokens;
  const base = g ? `word #${k} ${g.text} (pieces ${g.pieces.map((p) => tokens?.[p]?.text ?? p).join(' + ')})` : `#${k} ${labelOf(k)}`;
  // A token classifier's scores for the token (or a word's first piece).
  const d = $decision.get();
  const piece = g ? g.pieces[0] : k;
  const labels = d?.task === 'token-classification' && piece !== undefined ? tokenScoresLine(d, piece, 3) : '';
  return labels ? `${base} · ${labels}` : base;
}

/** Row k as the readout names it. */
export function tokenName(k: number): string {
  const t = labelOf(k);
  return t ? `“${t}” ${$merged.get() ? 'word ' : ''}#${k}` : `#${k}`;
}

/** The result on screen and the reader's state together (undefined before the first result). */
export function onScreen(): { init: ViewInit; state: ViewState } | undefined {
  const init = $init.get();
  const state = $viewState.get();
  return init && state ? { init, state } : undefined;
}
