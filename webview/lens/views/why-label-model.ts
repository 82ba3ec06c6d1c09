// Pure helpers of the Head ranking tab on a task head's checkpoint and of its "Why this label?" summary: the target
// in words, the label picker's options, the heads whose removal moves the target's logit most, the row to pin and
// the keys that row reads. No DOM.
import type { DecisionInfo, RankingCell, RankingView } from '../../../src/shared/interventions';
import { formatProb } from '../../../src/shared/predictions';
import { pieceLabel } from '../../../src/shared/token-layout';
import { fmtNum } from './task-scores-model';

/** How many heads the summary names. */
export const WHY_HEADS = 5;

/** "label “next” (logit 1.234, score 71.2%)", "label “B-PER” at 3 “▁Paris” …", "answer span “…” (tokens 5–7, logit …)". */
export function targetText(r: RankingView): string {
  const t = r.target;
  if (!t) return r.followed ? `token “${pieceLabel(r.followed.token)}”` : '';
  if (t.kind === 'span') return `the answer span “${t.text}” (tokens ${t.startToken}–${t.endToken}, start + end logit ${fmtNum(t.logit)})`;
  const at = t.position === undefined ? '' : ` at ${t.position} “${pieceLabel(t.token ?? '')}”`;
  return `label “${t.label}”${at} (logit ${fmtNum(t.logit)}, score ${formatProb(t.score)})`;
}

/** What the drop is a drop in, for captions and cell titles. */
export function dropOf(r: RankingView): string {
  const t = r.target;
  if (!t) return r.followed ? `log p of “${pieceLabel(r.followed.token)}”` : 'the followed value';
  return t.kind === 'span' ? 'the answer span’s logit' : `the logit of “${t.label}”`;
}

/** One line of the ranked list after the head's name. */
export function cellText(c: RankingCell, r: RankingView): string {
  if (r.target)
    return ` drop ${fmtNum(c.drop)} (logit after ${fmtNum(c.logitAfter ?? NaN)}${c.scoreAfter === undefined ? '' : `, score after ${formatProb(c.scoreAfter)}`})`;
  return ` drop ${fmtNum(c.drop)} (log p ${fmtNum(c.logprobAfter ?? NaN)}, rank ${c.rankAfter ?? '–'}, top “${c.top1After ?? ''}”)`;
}

export interface LabelOption {
  /** '' = the predicted label (the engine's default). */
  value: string;
  text: string;
}

/** The label picker: the predicted label first (the default), then every label by name with its score. */
export function labelOptions(info: DecisionInfo, position: number | null): LabelOption[] {
  const d = info.decision;
  let labels: { id: number; label: string; score: number }[] = [];
  let predicted: number | null = null;
  if (d?.kind === 'labels') [labels, predicted] = [d.labels, d.predicted];
  else if (d?.kind === 'tokens') {
    const t = d.tokens.find((x) => x.position === position) ?? d.tokens[0];
    if (t) [labels, predicted] = [t.labels, t.predicted];
  }
  const named = predicted === null ? undefined : labels.find((l) => l.id === predicted);
  return [
    { value: '', text: named ? `the predicted label (${named.label})` : 'the predicted label' },
    ...labels.map((l) => ({ value: String(l.id), text: `${l.label} (${formatProb(l.score)}${l.id === predicted ? ', predicted' : ''})` })),
  ];
}

export interface WhyCell extends RankingCell {
  /** supports: removing it lowers the target's logit; opposes: removing it raises it. */
  effect: 'supports' | 'opposes';
}

/** The heads whose removal moves the target's logit most (either way), largest |drop| first. */
export function whyCells(r: RankingView, k = WHY_HEADS): WhyCell[] {
  return r.ranking
    .filter((c) => Number.isFinite(c.drop) && c.drop !== 0)
    .sort((a, b) => Math.abs(b.drop) - Math.abs(a.drop))
    .slice(0, k)
    .map((c) => ({ ...c, effect: c.drop > 0 ? 'supports' : 'opposes' }));
}

/** "removing it lowers the logit by 0.812" / "raises it by 0.120". */
export function effectText(c: WhyCell): string {
  return c.effect === 'supports'
    ? `removing it lowers the logit by ${fmtNum(c.drop)}`
    : `removing it raises the logit by ${fmtNum(-c.drop)}`;
}

/** The query row the head reads for the decision: [CLS] (0) for a sequence classifier, the token for token
 *  classification, the span's start for QA. */
export function decisionRow(r: RankingView): number {
  const t = r.target;
  if (!t) return r.position;
  if (t.kind === 'span') return t.startToken;
  return t.position ?? 0;
}

export interface ReadKey {
  i: number;
  token: string;
  p: number;
}

/** The `k` keys a probs row gives the most weight, largest first. */
export function topKeys(row: ArrayLike<number>, tokens: readonly { text: string }[], k = 3): ReadKey[] {
  const idx = Array.from({ length: row.length }, (_, i) => i).filter((i) => Number.isFinite(row[i]));
  idx.sort((a, b) => (row[b] as number) - (row[a] as number) || a - b);
  return idx.slice(0, k).map((i) => ({ i, token: tokens[i]?.text ?? '', p: row[i] as number }));
}

/** "reads “[SEP]” 41%, “▁door” 12%, “▁the” 9%". */
export function readsText(keys: readonly ReadKey[]): string {
  return `reads ${keys.map((x) => `${x.i} “${pieceLabel(x.token)}” ${formatProb(x.p)}`).join(', ')}`;
}

/** Decimals of the grid's cells: two, or up to four when every drop is small (a weak classifier's logits move by
 *  thousandths: 0.0072 rather than a grid of 0.00). */
export function gridDigits(maxAbsDrop: number): number {
  if (!(maxAbsDrop > 0) || !Number.isFinite(maxAbsDrop)) return 2;
  return Math.max(2, Math.min(4, 1 - Math.floor(Math.log10(maxAbsDrop))));
}
