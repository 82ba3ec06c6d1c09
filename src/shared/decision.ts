// What a fine-tuned checkpoint decided about the explained text, as the panel's decision card, the token strip and
// the editor show it: every label's score (sequence classification), each token's label (token classification),
// the answer span (question answering), every choice's score (multiple choice). Pure: imported by the host and the
// webview.
import { formatProb } from './format';

export interface DecisionLabel {
  id: number;
  label: string;
  logit: number;
  /** Softmax, sigmoid (multi-label) or the logit itself (regression). */
  score: number;
}

export type ScoreFunction = 'softmax' | 'sigmoid' | 'none';

export interface TokenDecision {
  position: number;
  /** The label with the largest logit. */
  predicted: number;
  /** Softmax over the labels, in id order. */
  scores: number[];
}

export type Decision =
  | {
      task: 'sequence-classification';
      problemType: 'single_label_classification' | 'multi_label_classification' | 'regression';
      scoreFunction: ScoreFunction;
      /** Every label, in the checkpoint's id order. */
      labels: DecisionLabel[];
      /** The label with the largest logit; null for a one-value regression. */
      predicted: number | null;
    }
  | {
      task: 'token-classification';
      /** Label names by id. */
      names: string[];
      /** Every input position (specials included), in order. */
      tokens: TokenDecision[];
    }
  | {
      task: 'question-answering';
      /** The context's tokens [first, end). */
      context: [number, number];
      /** The best span inside the context (start + end logit), or null when the input had no context. */
      answer: { startToken: number; endToken: number; text: string | null; score: number } | null;
    }
  | {
      task: 'multiple-choice';
      /** Every choice in the order given (id = its index, label = its text), softmax over the choices. */
      choices: DecisionLabel[];
      /** The choice with the largest logit. */
      predicted: number;
      /** The choice whose run [CLS] prompt [SEP] choice [SEP] the panel shows. */
      shown: number;
    };

/** Webview → host: explain the prompt with another of its choices (a multiple-choice head's card). */
export interface ShowChoiceMessage {
  type: 'showChoice';
  resultId: number;
  index: number;
}

export function parseShowChoiceMessage(m: Record<string, unknown>): ShowChoiceMessage | undefined {
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  return ok(m.resultId) && ok(m.index) ? { type: 'showChoice', resultId: m.resultId, index: m.index } : undefined;
}

/** What "Why?" and "Which words?" follow: a label (at a token, for token classification), or the QA answer span. */
export type DecisionTarget = { label: number; position?: number } | { span: true };

/** Validates a target from the webview (untrusted input for the host). */
export function parseDecisionTarget(x: unknown): DecisionTarget | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const t = x as Record<string, unknown>;
  if (t.span === true) return { span: true };
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!ok(t.label)) return undefined;
  return ok(t.position) ? { label: t.label, position: t.position } : { label: t.label };
}

/** A score as the card writes it: a probability as a percentage, a regression value as a number. */
export function formatScore(score: number, fn: ScoreFunction): string {
  if (fn === 'none') return Number.isFinite(score) ? score.toPrecision(4) : '–';
  return formatProb(score);
}

/** "next 71.3%" / "3 × PER, 1 × LOC" (entity spans; `skip`: the specials): the decision on one line. */
export function decisionLine(d: Decision, skip: (position: number) => boolean = () => false): string {
  switch (d.task) {
    case 'sequence-classification': {
      const p = d.predicted === null ? undefined : d.labels.find((l) => l.id === d.predicted);
      if (!p) return d.labels.map((l) => `${l.label} ${formatScore(l.score, d.scoreFunction)}`).join(', ');
      return `${p.label} ${formatScore(p.score, d.scoreFunction)}`;
    }
    case 'token-classification': {
      const counts = new Map<string, number>();
      for (const span of entitySpans(d, skip)) counts.set(span.entity, (counts.get(span.entity) ?? 0) + 1);
      if (counts.size === 0) return `no entity (every token ${d.names[0] ?? 'O'})`;
      return [...counts].map(([name, c]) => `${c} × ${name}`).join(', ');
    }
    case 'question-answering':
      return d.answer
        ? `answer “${d.answer.text ?? `#${d.answer.startToken}–#${d.answer.endToken}`}”`
        : 'no answer: the input has no context';
    case 'multiple-choice': {
      const p = d.choices[d.predicted];
      return p ? `choice ${p.id + 1} “${shortChoice(p.label)}” ${formatProb(p.score)}` : '';
    }
  }
}

/** A choice as a line names it: its first 40 characters. */
export function shortChoice(text: string): string {
  const t = text.trim().replace(/\s+/gu, ' ');
  return t.length > 40 ? `${t.slice(0, 39)}…` : t;
}

/** "O" (outside any entity) and its usual spellings: a label the strip and the editor leave unmarked. */
export function isOutsideLabel(name: string): boolean {
  return name === 'O' || name === 'LABEL_0_O' || name.toLowerCase() === 'outside';
}

/** A label without its B-/I-/E-/S-/L-/U- tag: "B-PER" and "I-PER" are both PER (one span, one colour). */
export function entityOf(name: string): string {
  const m = /^[BIESLU][-_](.+)$/.exec(name);
  return m ? m[1]! : name;
}

/** Whether a token's label begins a new span rather than continuing the one before it (B- or S- tags). */
function beginsSpan(name: string): boolean {
  return /^[BSU][-_]/.test(name);
}

export interface EntitySpan {
  /** Token positions [first, last]. */
  first: number;
  last: number;
  entity: string;
  /** Mean over the span's tokens of their predicted label's score. */
  score: number;
}

/**
 * Consecutive tokens with the same entity as one span (B-X then I-X … is one X; a B-X after an X starts another),
 * skipping "O" and the positions `skip` names (the specials around the text).
 */
export function entitySpans(d: Extract<Decision, { task: 'token-classification' }>, skip: (position: number) => boolean): EntitySpan[] {
  const spans: EntitySpan[] = [];
  let cur: (EntitySpan & { sum: number; count: number }) | undefined;
  const close = () => {
    if (cur) spans.push({ first: cur.first, last: cur.last, entity: cur.entity, score: cur.sum / cur.count });
    cur = undefined;
  };
  for (const t of d.tokens) {
    const name = d.names[t.predicted] ?? `LABEL_${t.predicted}`;
    if (skip(t.position) || isOutsideLabel(name)) {
      close();
      continue;
    }
    const entity = entityOf(name);
    const score = t.scores[t.predicted] ?? NaN;
    if (cur && cur.entity === entity && cur.last === t.position - 1 && !beginsSpan(name)) {
      cur.last = t.position;
      cur.sum += score;
      cur.count++;
    } else {
      close();
      cur = { first: t.position, last: t.position, entity, score, sum: score, count: 1 };
    }
  }
  close();
  return spans;
}

/** The entities a token classifier can name, in id order, each once (the legend and the colour order). */
export function entityNames(names: readonly string[]): string[] {
  return [...new Set(names.filter((n) => !isOutsideLabel(n)).map(entityOf))];
}

/** One colour per entity, the same in the strip, the card's legend and the editor: a categorical palette (Tableau
 *  10) whose mid tones read on light and dark backgrounds alike. */
const ENTITY_PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** The colour of `entity` among a checkpoint's label names (by the entity's first appearance; it cycles past 10). */
export function entityColour(entity: string, names: readonly string[]): string {
  const k = entityNames(names).indexOf(entity);
  return ENTITY_PALETTE[(k < 0 ? 0 : k) % ENTITY_PALETTE.length]!;
}

/** Every label's score at one token, best first: "B-PER 93.1%, O 4.2%, I-PER 1.0%". */
export function tokenScoresLine(d: Extract<Decision, { task: 'token-classification' }>, position: number, count = 4): string {
  const t = d.tokens.find((x) => x.position === position);
  if (!t) return '';
  return t.scores
    .map((s, id) => ({ s, name: d.names[id] ?? `LABEL_${id}` }))
    .sort((a, b) => b.s - a.s)
    .slice(0, count)
    .map((x) => `${x.name} ${formatProb(x.s)}`)
    .join(', ');
}

/** The answer as read: its text without the spaces its first piece carries, or its token range without text. */
export function answerText(a: { startToken: number; endToken: number; text: string | null }): string {
  return a.text !== null ? a.text.trim() : `#${a.startToken}–#${a.endToken}`;
}
