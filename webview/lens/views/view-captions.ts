// The words above each analysis view: its caption (BERT's where DeBERTa's would be wrong), its tab title, the
// line shown instead of a view that cannot apply, and the merged heatmap's caption. Pure: no DOM.
import type { AnalysisView } from '../../../src/shared/protocol/lens';

/** One-line caption per view: what it shows, for someone who knows attention but not this tool. */
export const VIEW_CAPTIONS: Record<AnalysisView, string> = {
  shares:
    'Each cell is one head (rows: layers, columns: heads). Colour: how much of its attention scores comes from content (c2c, green) versus relative position (c2p + p2c, purple), by mean |term| share.',
  ablation:
    'What this head would attend to if some score terms were dropped (same scale, same softmax): real probabilities, ablated probabilities, and ablated − real. Rows are queries, columns keys.',
  distance:
    'The c2p and p2c terms of this head averaged over every (query, key) pair at the same relative distance δ = query − key (δ > 0: key to the left), mean ± std. Hover a token for its own row.',
  buckets:
    'Which (query, key) pairs see their exact relative distance and which share a log bucket (several distances read the same position embedding) or are clamped at the span’s edge.',
  rollout:
    'Attention rollout: how much of each key token’s input reaches each query token’s output through all layers (heads averaged, residual added), for the real model or an ablation.',
  interventions:
    'Remove attention terms inside the real forward pass (zero them before the softmax, or replace them by their mean) and rerun every later layer: the predictions at each [MASK] (or a classifier’s labels) before and after. Unlike “Softmax ablation”, which re-softmaxes one layer’s stored terms, this is a recomputation.',
  ranking:
    'Which heads matter at one position: each head’s term removed alone (rerun from its layer), heads ranked by the drop in the log-probability of the token the model predicts there (a classifier: in the logit of the label you pick). Click a cell to open that head.',
  lines:
    'bertviz’s head view for long inputs: queries on the left, keys on the right, one line per (query, key) of the current layer and head, as opaque as its weight. Hover a word to keep only its lines (left: its row, right: its column); click to hold it; scroll for the rest.',
  model:
    'bertviz’s model view: every layer × head of the chosen term as a small heatmap (rows queries, columns keys). Layers load as they scroll into view; click a thumbnail to open that layer and head in the heatmap.',
  patching:
    'What carries the decision: the explained (clean) text and a corrupted copy you edit (swap one word) are run, then pieces of the clean run are put into the corrupted run and the share of the clean target that comes back is shown (restored = (patched − corrupt) / (clean − corrupt)). Click a cell or an edge to open that layer, head and row in the heatmap.',
  diff: 'This explain minus the previous one (e.g. before and after an edit) for the current layer, head and term, over the tokens both texts share (matched in order by piece text). Red: larger now, blue: smaller.',
};

/**
 * BERT's captions where DeBERTa's words would be wrong: BERT has absolute positions, one q·k score per layer, and
 * only layer 0's score splits exactly by embedding part (content, position, and the rest: token type, LayerNorm
 * shift, biases).
 */
export const BERT_VIEW_CAPTIONS: Partial<Record<AnalysisView, string>> = {
  shares:
    'BERT, layer 0, per head: the mean share of |c2c|, |c2p|, |p2c|, |p2p| and |rest| in the score (per (query, key) cell |term| / sum of the five |terms|, then the mean over cells — the rule DeBERTa’s grid uses over its three terms). Position here is absolute: p2p and rest (token type, LayerNorm shift, biases) are BERT’s extra columns.',
  distance:
    'BERT, layer 0: the score’s c2p, p2c and p2p (c2c for reference) averaged over every (query, key) pair at the same distance δ = query − key (δ > 0: key to the left): the mean per δ (± std in the readout). They come from absolute position embeddings, entangled with content by one LayerNorm, so this shows how much of them depends on δ alone; the split is exact in layer 0 only. Hover a token for its own row.',
  rollout:
    'Attention rollout: how much of each key token’s input reaches each query token’s output through all layers (heads averaged, residual added), of the real attention.',
  interventions:
    'Remove whole heads inside the real forward pass (BERT’s score is one q·k product: zero a head’s score, or replace it by its mean over keys) and rerun every later layer: the predictions at each [MASK] (or a classifier’s labels) before and after.',
  ranking:
    'Which heads matter at one position: each head’s score removed alone (rerun from its layer), heads ranked by the drop in the log-probability of the token the model predicts there (a classifier: in the logit of the label you pick). Click a cell to open that head.',
};

/** One line instead of a view that works on DeBERTa's separable relative-position terms. */
export const BERT_NOT_APPLICABLE: Partial<Record<AnalysisView, string>> = {
  ablation:
    'Softmax ablation drops DeBERTa’s separable terms (c2c, c2p, p2c) from every layer’s score; BERT’s score is one q·k product with no such terms, so there is nothing to drop here (Intervention removes whole heads).',
  buckets:
    'The bucket lens shows which distances share a relative-position embedding; BERT has absolute position embeddings, one per position, so there are no relative buckets.',
};

/** The caption of `view` for the model on screen. */
export function viewCaption(view: AnalysisView, bert: boolean): string {
  return (bert && (BERT_NOT_APPLICABLE[view] === undefined ? BERT_VIEW_CAPTIONS[view] : undefined)) || VIEW_CAPTIONS[view];
}

/** What BERT's views say about a layer after 0. */
export function bertNoSplitText(layer: number, view: 'distance' | 'shares'): string {
  const what = view === 'distance' ? 'no c2p, p2c or p2p to profile by δ' : 'no term shares';
  return `BERT has no separable terms in layer ${layer}: its score is one q·k product of hidden states in which content and position are already mixed, so there are ${what}. Only layer 0’s score splits exactly.`;
}

export const VIEW_TITLES: Record<AnalysisView, string> = {
  shares: 'Term shares',
  ablation: 'Softmax ablation',
  distance: 'Distance',
  buckets: 'Buckets',
  rollout: 'Rollout',
  diff: 'Diff',
  interventions: 'Intervention (rerun)',
  ranking: 'Head ranking',
  lines: 'Lines',
  model: 'All heads',
  patching: 'Patching',
};

/** Caption of the word-merged heatmap: which pooling made the numbers. */
export function mergeCaption(kind: string, mode: 'words' | 'identifiers', columns: 'sum' | 'mean', words: number, pieces: number): string {
  const unit = mode === 'identifiers' ? 'identifiers' : 'words';
  return `${pieces} pieces merged into ${words} ${unit}: each row is the mean over the query word’s pieces, each column the ${columns} over the key word’s pieces (${kind}${columns === 'sum' ? ': rows still sum to 1' : ''}).`;
}
