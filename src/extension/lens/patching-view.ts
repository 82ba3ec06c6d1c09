// The engine's patch result shaped for the Patching tab: the grid with its axes, the target in words with its clean
// and corrupted values, and each run's prediction as one line. Pure: the engine's types in, the shared view out.
import type { PatchResult, PredictResult, TermName, Token } from '../../engine';
import type { PatchGridView, PatchView } from '../../shared/patching';
import { pieceLabel } from '../../shared/token-layout';

const pct = (p: number) => `${(100 * p).toFixed(1)}%`;
const label = (t: Token) => (t.special ? t.text : pieceLabel(t.text));

/** One line for what a run predicts: the top tokens at the followed position, or the labels with their scores. */
export function predictionLine(p: PredictResult, position: number | null): string {
  const c = p.classification;
  if (c) return c.labels.map((l) => `${l.label} ${c.score_function === 'none' ? l.score.toFixed(3) : pct(l.score)}`).join(' · ');
  const tc = p.token_classification?.find((t) => t.position === position) ?? p.token_classification?.[0];
  if (tc) return `at ${tc.position}: ${tc.labels.map((l) => `${l.label} ${pct(l.score)}`).join(' · ')}`;
  const mc = p.multiple_choice;
  // Its score is the target, shown beside this line: the line names the choice the run holds.
  if (mc) return mc.choices.map((x) => `choice “${x.text}”`).join(' · ');
  const qa = p.question_answering?.answer;
  if (p.question_answering) return qa ? `answer “${qa.text ?? `${qa.start_token}–${qa.end_token}`}” ${pct(qa.score)}` : 'no answer';
  const pred = p.predictions.find((x) => x.position === position) ?? p.predictions[0];
  if (pred)
    return `at ${pred.position}: ${pred.top
      .slice(0, 3)
      .map((t) => `“${pieceLabel(t.token)}” ${pct(t.prob)}`)
      .join(' · ')}`;
  return p.task;
}

/** The target in words, the row it is read at, and its unit. */
function targetOf(r: PatchResult): { target: string; targetPosition: number | null; unit: string } {
  const t = r.target;
  if (t.kind === 'token')
    return { target: `log p of “${pieceLabel(t.token)}” at ${t.position}`, targetPosition: t.position, unit: 'log p' };
  if (t.kind === 'label')
    return {
      target: `logit of “${t.label}”${t.position === undefined ? '' : ` at ${t.position}`}`,
      targetPosition: t.position ?? 0,
      unit: 'logit',
    };
  if (t.kind === 'span')
    return { target: `answer span ${t.start_token}–${t.end_token} (start + end logit)`, targetPosition: t.start_token, unit: 'logit' };
  if (t.kind === 'choice') return { target: `score of the choice “${t.choice}”`, targetPosition: 0, unit: 'logit' };
  return { target: `replaced-token logit at ${t.position}`, targetPosition: t.position, unit: 'logit' };
}

function gridOf(r: PatchResult): PatchGridView {
  const g = r.grid;
  if (!g) throw new Error('the engine’s patch result has no grid');
  if (g.kind === 'resid') return { kind: 'resid', axes: ['layer', 'position'], restored: g.restored, value: g.value };
  if (g.kind === 'heads') return { kind: 'heads', axes: ['term', 'layer', 'head'], terms: g.terms, restored: g.restored, value: g.value };
  return {
    kind: 'flow',
    axes: ['layer', 'to', 'from'],
    threshold: g.threshold,
    targetRows: g.target_rows,
    edges: g.edges.map((e) => {
      // Per-term shares: given by engines that report them (the view falls back to the dominant term alone).
      const shares = (e as { shares?: Partial<Record<TermName, number>> }).shares;
      return { layer: e.layer, to: e.to, from: e.from, change: e.change, term: e.term, ...(shares ? { shares } : {}) };
    }),
    knockouts: g.knockouts,
  };
}

export function patchView(r: PatchResult, ms: number): PatchView {
  const t = targetOf(r);
  const g = gridOf(r);
  return {
    trace: g.kind,
    layers: r.model.layers,
    heads: r.model.heads,
    // BERT's model info lists no disentangled terms: its score is content alone.
    terms: ['c2c', ...r.model.terms.filter((x) => x !== 'c2c')],
    tokens: r.tokens.map(label),
    corruptTokens: r.corrupt_tokens.map(label),
    differing: r.input_ids.flatMap((id, i) => (id !== r.corrupt_ids[i] ? [i] : [])),
    ...t,
    clean: r.clean_value,
    corrupt: r.corrupt_value,
    predictions: { clean: predictionLine(r.clean, t.targetPosition), corrupt: predictionLine(r.corrupt, t.targetPosition) },
    grid: g,
    reruns: r.timings.reruns,
    ms,
  };
}
