// The matrix vocabulary, written once: the three disentangled terms, their scaled sum and the softmax.
// Used by the engine, the extension host and the webview alike.

/** The three disentangled attention terms, raw (unscaled). */
export type TermName = 'c2c' | 'c2p' | 'p2c';
/** Everything the engine can hand out per layer: the raw terms, their scaled sum and the softmax. */
export type MatrixKind = TermName | 'scores' | 'probs';

export const TERM_NAMES: readonly TermName[] = ['c2c', 'c2p', 'p2c'];
/** Every kind, in the order menus, readouts and exports list them. */
export const MATRIX_KINDS: readonly MatrixKind[] = ['c2c', 'c2p', 'p2c', 'scores', 'probs'];

/** Menu labels: the kind and what it is. */
export const KIND_LABELS: Readonly<Record<MatrixKind, string>> = {
  c2c: 'c2c (content→content)',
  c2p: 'c2p (content→position)',
  p2c: 'p2c (position→content)',
  scores: 'scores ((c2c+c2p+p2c)/scale)',
  probs: 'probs (softmax)',
};

/** Short names for readouts and tables (a pair has one score and one prob). */
export const KIND_SHORT: Readonly<Record<MatrixKind, string>> = { c2c: 'c2c', c2p: 'c2p', p2c: 'p2c', scores: 'score', probs: 'prob' };

export function isMatrixKind(x: unknown): x is MatrixKind {
  return typeof x === 'string' && (MATRIX_KINDS as readonly string[]).includes(x);
}

/** Signed kinds can be negative (raw terms and scores); probs are in [0, 1]. */
export function isSignedKind(kind: MatrixKind): boolean {
  return kind !== 'probs';
}

/** Raw terms: a positive value raises the score, a negative one lowers it. */
export function isRawTerm(kind: MatrixKind): kind is TermName {
  return kind === 'c2c' || kind === 'c2p' || kind === 'p2c';
}

/** The kinds a result has: c2c, scores and probs always, c2p / p2c when the model uses them. */
export function kindsOf(has: (kind: MatrixKind) => boolean): MatrixKind[] {
  return MATRIX_KINDS.filter(has);
}

/**
 * The kinds a view offers for a model, in picker order: DeBERTa's c2c, the c2p / p2c it uses, scores and probs.
 * BERT's layers have no terms (its raw q·k is the score itself, not a "content→content" part), so scores and probs.
 * The panel's pickers and the host's guess at the first heatmap both use this, so they agree.
 */
export function viewKinds(model: { type: string; terms: readonly TermName[] }): MatrixKind[] {
  if (model.type === 'bert') return ['scores', 'probs'];
  return kindsOf((k) => !isRawTerm(k) || k === 'c2c' || model.terms.includes(k));
}

/**
 * BERT's layer-0 score split by what entered the embedding (content or absolute position, on each side, and the
 * rest: biases and token types), in the order every list, export and table shows them. Their sum is the score.
 */
export const DECOMPOSITION_TERMS = ['c2c', 'c2p', 'p2c', 'p2p', 'rest'] as const;
export type DecompositionTerm = (typeof DECOMPOSITION_TERMS)[number];
