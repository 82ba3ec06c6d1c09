// A task head's output (the engine's TaskOutput) and a task-head sweep's target, shaped for the Intervention and
// Head ranking tabs. Pure: the engine's types in, the shared view types out.
import type { PredictResult, SweepResult, TaskOutput, Token } from '../../engine';
import type { DecisionInfo, DecisionView, PanelTask, RankingTarget } from '../../shared/interventions';

const labelsOf = (ls: readonly { id: number; label: string; logit: number; score: number }[]) =>
  ls.map((l) => ({ id: l.id, label: l.label, logit: l.logit, score: l.score }));

/** The decision in `out` (exactly one of its fields is set, by the head's kind); undefined when none is. `text`: the
 *  input the tokens' offsets point into, for a span the engine gives no text for (a typed [SEP], not a pair). */
export function decisionView(out: TaskOutput, tokens: readonly Token[], text?: string): DecisionView | undefined {
  if (out.classification) {
    const c = out.classification;
    return { kind: 'labels', scoreFunction: c.score_function, labels: labelsOf(c.labels), predicted: c.predicted?.id ?? null };
  }
  if (out.token_classification) {
    const rows = out.token_classification;
    return {
      kind: 'tokens',
      labelNames: (rows[0]?.labels ?? []).map((l) => l.label),
      tokens: rows.map((t) => ({
        position: t.position,
        token: tokens[t.position]?.text ?? '',
        labels: labelsOf(t.labels),
        predicted: t.predicted.id,
      })),
    };
  }
  if (out.question_answering) {
    const a = out.question_answering.answer;
    return {
      kind: 'span',
      answer: a
        ? {
            text: a.text ?? spanText(tokens, a.start_token, a.end_token, text),
            startToken: a.start_token,
            endToken: a.end_token,
            score: a.score,
          }
        : null,
    };
  }
  if (out.multiple_choice) {
    const m = out.multiple_choice;
    return {
      kind: 'choices',
      choices: m.choices.map((c) => ({ index: c.index, text: c.text, logit: c.logit, score: c.score })),
      predicted: m.predicted,
    };
  }
  return undefined;
}

/** The text of tokens [start, end]: from `text` by their offsets, else their pieces joined (ids were given). */
export function spanText(tokens: readonly Token[], start: number, end: number, text?: string): string {
  const [s, e] = [tokens[start], tokens[end]];
  if (text !== undefined && s && e && !s.special && !e.special && s.start < e.end) return text.slice(s.start, e.end);
  return tokens
    .slice(start, end + 1)
    .map((t) => t.text)
    .join('')
    .replace(/[▁Ġ]/gu, ' ')
    .replace(/##/g, '')
    .trim();
}

/** Why a multiple-choice head ranks nothing (the Patching tab follows the choice on screen instead). */
export const MULTIPLE_CHOICE_UNRANKABLE = 'A head ranking on a multiple-choice head is not supported (it would sweep every choice).';

/** What the Head ranking tab can follow on this checkpoint, from what its head predicted on the explained input. */
export function decisionInfo(p: Pick<PredictResult, 'task' | 'tokens'> & TaskOutput, text?: string): DecisionInfo {
  const task: PanelTask = p.task;
  if (task === 'masked-lm') return { task };
  if (task === 'replaced-token-detection')
    return {
      task,
      unrankable:
        'This checkpoint has only a replaced-token-detection head: a head ranking follows a masked token (masked-LM head) or a label (a classifier); choose such a model.',
      unpatchable:
        'This checkpoint has only a replaced-token-detection head: patching follows a masked token (masked-LM head), a label, an answer span or a choice; choose such a model.',
    };
  const decision = decisionView(p, p.tokens, text);
  if (task === 'multiple-choice') return { task, decision, unrankable: MULTIPLE_CHOICE_UNRANKABLE };
  if (task === 'question-answering' && (!decision || decision.kind !== 'span' || !decision.answer)) {
    const why = 'This question-answering model found no answer span in the context: nothing to follow.';
    return { task, decision, unrankable: why, unpatchable: why };
  }
  return { task, decision };
}

/** A task-head sweep's target, with the token it reads (token classification) or the span's text (QA). */
export function rankingTarget(r: SweepResult, answerText?: string): RankingTarget | undefined {
  const t = r.target;
  if (!t) return undefined;
  if (t.kind === 'span')
    return {
      kind: 'span',
      startToken: t.start_token,
      endToken: t.end_token,
      text: answerText ?? spanText(r.tokens, t.start_token, t.end_token),
      logit: t.logit_before,
    };
  return {
    kind: 'label',
    id: t.id,
    label: t.label,
    ...(t.position === undefined ? {} : { position: t.position, token: r.tokens[t.position]?.text ?? '' }),
    logit: t.logit_before,
    score: t.score_before,
  };
}
