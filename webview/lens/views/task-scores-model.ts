// Pure helpers of the Intervention tab on a task head's checkpoint: a classifier's labels before and after the
// intervention, the tokens whose label changed (token classification), the answer span before and after (QA). No DOM.
import type { DecisionView, LabelView } from '../../../src/shared/interventions';
import { formatProb } from '../../../src/shared/predictions';
import { pieceLabel } from '../../../src/shared/token-layout';

/** A number with a typographic minus, as the other views print them. */
export const fmtNum = (x: number, digits = 3): string => (Number.isFinite(x) ? x.toFixed(digits).replace('-', '−') : '–');
/** A signed change: +0.120, −0.045. */
export const fmtDelta = (x: number, digits = 3): string => (x > 0 ? `+${fmtNum(x, digits)}` : fmtNum(x, digits));
/** A score as the head gives it: a probability as a percentage, a regression value as a number. */
export const fmtScore = (x: number, fn: 'softmax' | 'sigmoid' | 'none'): string => (fn === 'none' ? fmtNum(x) : formatProb(x));

export interface LabelChangeRow {
  id: number;
  label: string;
  logitBefore: number;
  logitAfter: number;
  scoreBefore: number;
  scoreAfter: number;
  /** The head's decision before / after (the label with the largest logit). */
  predictedBefore: boolean;
  predictedAfter: boolean;
  /** The score moved by at least CHANGED (or the decision moved to or from this label). */
  changed: boolean;
}

/** A score change a reader notices (one percentage point), below which a row is not highlighted. */
export const CHANGED = 0.01;

export interface LabelChanges {
  rows: LabelChangeRow[];
  /** The decision before → after (null: no predicted label, one-label regression). */
  before: LabelView | null;
  after: LabelView | null;
  flipped: boolean;
  /** One line: "Decision unchanged: next (71.2% → 64.0%)" or "Decision changed: next → not_next". */
  summary: string;
}

/** Every label of a classifier before and after, in the checkpoint's id order. */
export function labelChanges(
  before: Extract<DecisionView, { kind: 'labels' }>,
  after: Extract<DecisionView, { kind: 'labels' }>,
): LabelChanges {
  const fn = before.scoreFunction;
  const rows = before.labels.map((b, k) => {
    const a = after.labels[k] ?? { ...b, logit: NaN, score: NaN };
    const predictedBefore = before.predicted === b.id;
    const predictedAfter = after.predicted === b.id;
    return {
      id: b.id,
      label: b.label,
      logitBefore: b.logit,
      logitAfter: a.logit,
      scoreBefore: b.score,
      scoreAfter: a.score,
      predictedBefore,
      predictedAfter,
      changed: Math.abs(a.score - b.score) >= CHANGED || predictedBefore !== predictedAfter,
    };
  });
  const pb = before.labels.find((l) => l.id === before.predicted) ?? null;
  const pa = after.labels.find((l) => l.id === after.predicted) ?? null;
  const flipped = pb?.id !== pa?.id;
  let summary: string;
  if (!pb || !pa) summary = `Regression output: ${fmtNum(before.labels[0]?.logit ?? NaN)} → ${fmtNum(after.labels[0]?.logit ?? NaN)}`;
  else if (flipped) summary = `Decision changed: ${pb.label} (${fmtScore(pb.score, fn)}) → ${pa.label} (${fmtScore(pa.score, fn)})`;
  else summary = `Decision unchanged: ${pb.label} (${fmtScore(pb.score, fn)} → ${fmtScore(pa.score, fn)})`;
  return { rows, before: pb, after: pa, flipped, summary };
}

export interface TokenChangeRow {
  position: number;
  token: string;
  before: string;
  after: string;
  scoreBefore: number;
  scoreAfter: number;
  changed: boolean;
}

/** Each token's predicted label before and after; `changed` lists the positions whose label changed. */
export function tokenChanges(
  before: Extract<DecisionView, { kind: 'tokens' }>,
  after: Extract<DecisionView, { kind: 'tokens' }>,
): { rows: TokenChangeRow[]; changed: number[]; summary: string } {
  const byPosition = new Map(after.tokens.map((t) => [t.position, t]));
  const rows = before.tokens.map((b) => {
    const a = byPosition.get(b.position);
    const lb = b.labels[b.predicted];
    const la = a?.labels[a.predicted];
    return {
      position: b.position,
      token: b.token,
      before: lb?.label ?? '',
      after: la?.label ?? '',
      scoreBefore: lb?.score ?? NaN,
      scoreAfter: la?.score ?? NaN,
      changed: !!a && a.predicted !== b.predicted,
    };
  });
  const changed = rows.filter((r) => r.changed).map((r) => r.position);
  const summary =
    changed.length === 0
      ? `No token changed its label (${rows.length} tokens).`
      : `${changed.length} of ${rows.length} tokens changed their label: ${rows
          .filter((r) => r.changed)
          .map((r) => `${r.position} ${pieceLabel(r.token)} ${r.before} → ${r.after}`)
          .join(', ')}`;
  return { rows, changed, summary };
}

/** The answer span before and after, with its score (start + end logit). */
export function spanChange(before: Extract<DecisionView, { kind: 'span' }>, after: Extract<DecisionView, { kind: 'span' }>): string {
  const say = (a: (typeof before)['answer']) =>
    a ? `“${a.text ?? ''}” (tokens ${a.startToken}–${a.endToken}, score ${fmtNum(a.score)})` : 'no answer';
  const same =
    before.answer &&
    after.answer &&
    before.answer.startToken === after.answer.startToken &&
    before.answer.endToken === after.answer.endToken;
  return `${same ? 'Answer unchanged' : 'Answer changed'}: ${say(before.answer)} → ${say(after.answer)}`;
}

/** The width of a score's bar, 0…100 (%), for a probability; regression scores get none. */
export function barWidth(score: number, fn: 'softmax' | 'sigmoid' | 'none'): number {
  if (fn === 'none' || !Number.isFinite(score)) return 0;
  return Math.max(0, Math.min(100, 100 * score));
}
