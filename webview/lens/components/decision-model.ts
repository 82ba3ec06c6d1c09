// Pure parts of the decision card (./decision-card.ts): what each row says and how wide its bar is. No DOM: the unit
// tests run it under node.
import { type Decision, entityNames, entityColour, formatScore, isOutsideLabel, entityOf, shortChoice } from '../../../src/shared/decision';

export interface CardRow {
  id: number;
  name: string;
  /** The score as written (a percentage, or a regression value). */
  text: string;
  /** Bar length in [0, 1] (a regression value has no bar). */
  bar: number | null;
  logit: number;
  predicted: boolean;
}

/** A sequence classifier's rows: every label in id order, the predicted one marked. A multiple-choice head's: every
 *  choice in the order given, named by its number and text. */
export function classificationRows(d: Extract<Decision, { task: 'sequence-classification' | 'multiple-choice' }>): CardRow[] {
  if (d.task === 'multiple-choice')
    return d.choices.map((c) => ({
      id: c.id,
      name: `${c.id + 1}. ${shortChoice(c.label)}`,
      text: formatScore(c.score, 'softmax'),
      bar: Math.max(0, Math.min(1, c.score)),
      logit: c.logit,
      predicted: c.id === d.predicted,
    }));
  return d.labels.map((l) => ({
    id: l.id,
    name: l.label,
    text: formatScore(l.score, d.scoreFunction),
    bar: d.scoreFunction === 'none' ? null : Math.max(0, Math.min(1, l.score)),
    logit: l.logit,
    predicted: l.id === d.predicted,
  }));
}

/** The card's heading: what kind of head, and how its scores are read. */
export function cardHeading(d: Decision): string {
  switch (d.task) {
    case 'sequence-classification': {
      const how =
        d.problemType === 'regression'
          ? 'regression: the value is the logit'
          : d.problemType === 'multi_label_classification'
            ? 'multi-label: a sigmoid per label'
            : `softmax over ${d.labels.length} labels`;
      return `Sequence classification · ${how}`;
    }
    case 'token-classification':
      return `Token classification · ${d.names.length} labels per token`;
    case 'question-answering':
      return 'Question answering · the best span of the context (start + end logit)';
    case 'multiple-choice':
      return `Multiple choice · softmax over ${d.choices.length} choices, one run each`;
  }
}

export interface LegendEntry {
  entity: string;
  colour: string;
  /** Tokens labelled with it (any B-/I- tag). */
  count: number;
}

/** A token classifier's entities with their colours and how many tokens carry each (specials skipped). */
export function entityLegend(d: Extract<Decision, { task: 'token-classification' }>, special: (p: number) => boolean): LegendEntry[] {
  const counts = new Map<string, number>();
  for (const t of d.tokens) {
    const name = d.names[t.predicted] ?? '';
    if (special(t.position) || isOutsideLabel(name)) continue;
    counts.set(entityOf(name), (counts.get(entityOf(name)) ?? 0) + 1);
  }
  return entityNames(d.names).map((entity) => ({ entity, colour: entityColour(entity, d.names), count: counts.get(entity) ?? 0 }));
}
