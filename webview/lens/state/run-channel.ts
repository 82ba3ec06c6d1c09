// Runs of the model the view asks the host for (an intervention, a head-ranking sweep, the intervened run's
// attention): ids, progress and cancel, apart from components/requests.ts's matrix requests. Also the banner that
// says when the panel shows an intervened run rather than the plain explain.
import { MessageHandler } from '../../../src/shared/messaging/message-handler';
import {
  runAsking,
  type RunProgress,
  type RunReply,
  type RunRequest,
  type RunToHost,
  type RunToWebview,
} from '../../../src/shared/interventions';
import type { ViewInit, WebviewToHost } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';

let poster: ((m: RunToHost) => void) | undefined;
/** Numbers the runs (apart from the matrix requests) and settles each with its result; progress goes to its caller. */
const runs = new MessageHandler({ post: (m: RunToHost) => poster?.(m), asks: runAsking });

export function connectRuns(post: (m: RunToHost) => void): void {
  poster = post;
}

export function sendRun(m: RunToHost): void {
  runs.send(m);
}

/** Starts a run; the promise settles with the host's answer (rejects with `cancelled` set when cancelled). */
export function startRun(body: RunRequest, progress?: (p: RunProgress) => void): { id: number; done: Promise<RunReply> } {
  const { id, reply } = runs.start(body, undefined, progress);
  return { id, done: reply };
}

export function cancelRun(id: number): void {
  sendRun({ type: 'cancelRun', id });
}

export function receiveRun(m: RunToWebview): void {
  runs.receive(m);
}

/** Above the toolbar while an intervened run is on screen: what was removed, and the way back. */
export function showRunBanner(init: ViewInit, post: (m: WebviewToHost) => void): void {
  const app = document.getElementById('app');
  const run = init.run;
  if (!app || !run) return;
  const back = el('button', { id: 'run-back', type: 'button' }, ['Back to the plain run']);
  back.addEventListener('click', () =>
    post({ type: 'showRun', resultId: init.resultId, run: 'plain', entries: run.entries.join(','), mode: run.mode }),
  );
  const what = `${run.entries.join(', ')} removed (${run.mode === 'mean' ? 'replaced by the mean' : 'zeroed'})`;
  app.prepend(
    el('div', { id: 'run-banner', class: 'run-banner', role: 'status' }, [
      el('strong', {}, ['Intervened run: ']),
      `${what}. Every tab shows this run; Diff shows it minus the plain run. `,
      back,
    ]),
  );
}
