// A task head's prediction as the views show a decision (the lens panel's card, the editor, each side of Compare).
import type { PredictResult } from '../../engine';
import type { Decision } from '../../shared/decision';

/** A task head's output as the decision card, the strip and the editor show it (undefined: no task head). `shown`:
 *  the multiple-choice run on screen (default the predicted choice). */
export function decisionOf(r: PredictResult, shown?: number): Decision | undefined {
  const label = (l: { id: number; label: string; logit: number; score: number }) => ({
    id: l.id,
    label: l.label,
    logit: l.logit,
    score: l.score,
  });
  if (r.classification) {
    const c = r.classification;
    return {
      task: 'sequence-classification',
      problemType: c.problem_type,
      scoreFunction: c.score_function,
      labels: c.labels.map(label),
      predicted: c.predicted?.id ?? null,
    };
  }
  if (r.token_classification) {
    const names = r.token_classification[0]?.labels.map((l) => l.label) ?? [];
    return {
      task: 'token-classification',
      names,
      tokens: r.token_classification.map((t) => ({
        position: t.position,
        predicted: t.predicted.id,
        scores: t.labels.map((l) => l.score),
      })),
    };
  }
  if (r.question_answering) {
    const q = r.question_answering;
    const a = q.answer;
    return {
      task: 'question-answering',
      context: q.context_tokens,
      answer: a ? { startToken: a.start_token, endToken: a.end_token, text: a.text, score: a.score } : null,
    };
  }
  if (r.multiple_choice) {
    const m = r.multiple_choice;
    return {
      task: 'multiple-choice',
      choices: m.choices.map((c) => ({ id: c.index, label: c.text, logit: c.logit, score: c.score })),
      predicted: m.predicted,
      shown: shown ?? m.predicted,
    };
  }
  return undefined;
}
