// "Why this label?": opens the Head ranking tab aimed at one label of a classifier (at one token for token
// classification) and starts the ranking over every term. The decision card calls askWhy; the tab's own button too.
import type { DecisionTarget } from '../../../src/shared/decision';
import { update } from '../state/actions';

/** An ask waiting for the Head ranking tab to render (it takes it once, then runs). */
export interface WhyAsk {
  labelId: number | null;
  position: number | null;
}

let pending: WhyAsk | undefined;

/** Opens the Head ranking tab with this target and starts the ranking (every term the model has). */
export function askWhy(labelId: number, position?: number): void {
  requestWhy({ labelId, position: position ?? null });
}

/** The decision card's target (a label, at a token for token classification; or the QA answer span). */
export function askWhyFor(target: DecisionTarget): void {
  if ('span' in target) requestWhy({ labelId: null, position: null });
  else askWhy(target.label, target.position);
}

/** The same for the tab's own button: null = the predicted label / the default position. */
export function requestWhy(ask: WhyAsk): void {
  pending = ask;
  update({ view: 'ranking' });
}

/** The ask waiting for the tab, taken (the tab calls this once per render). */
export function takeAsk(): WhyAsk | undefined {
  const a = pending;
  pending = undefined;
  return a;
}
