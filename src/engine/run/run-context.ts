// What every verb (explain, predict, ablate, the intervened run, sweep) takes of an open model: the base a run
// helper reads, plus the model's prediction heads and intervention tails, each started on first use and stopped
// with the model. Verbs depend on this interface only, never on the concrete model (model/open-model.ts
// implements it and calls them), as analyses in a transparency tool depend on an abstract model.
import type { HeadSession } from './head-session';
import type { RunBase } from './run-base';
import type { TailSessions } from './tail-sessions';

export type { GraphCacheSettings, RunBase } from './run-base';

export interface RunContext extends RunBase {
  /** The prediction heads and their runtime sessions. */
  readonly heads: HeadSession;
  /** The graphs of the layers from one layer on, for interventions. */
  readonly tails: TailSessions;
}
