// Runs of the model the view asks the host for (an intervention, a head-ranking sweep, the intervened run's
// attention): ids, progress and cancel, apart from app/requests.ts's matrix requests. Also the banner that says when the
// panel shows an intervened run rather than the plain explain.
import type { RankingView, InterventionView, RunToHost, RunToWebview } from '../../../src/shared/interventions';
import type { ViewInit, WebviewToHost } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';

type Progress = (p: { done: number; total: number; layer: number }) => void;
interface Wait {
  progress?: Progress;
  resolve(v: { intervention?: InterventionView; ranking?: RankingView }): void;
  reject(e: Error & { cancelled?: boolean }): void;
}

let poster: ((m: RunToHost) => void) | undefined;
let nextId = 1;
const waits = new Map<number, Wait>();

export function connectRuns(post: (m: RunToHost) => void): void {
  poster = post;
}

export function sendRun(m: RunToHost): void {
  poster?.(m);
}

type RunBody = { type: 'intervene'; resultId: number; entries: string; mode: 'zero' | 'mean'; position: number | null; top: number }
  | { type: 'sweep'; resultId: number; terms: ('c2c' | 'c2p' | 'p2c')[]; mode: 'zero' | 'mean'; position: number | null };

/** Starts a run; the promise settles with the host's answer (rejects with `cancelled` set when cancelled). */
export function startRun(body: RunBody, progress?: Progress): { id: number; done: Promise<{ intervention?: InterventionView; ranking?: RankingView }> } {
  const id = nextId++;
  const done = new Promise<{ intervention?: InterventionView; ranking?: RankingView }>((resolve, reject) => waits.set(id, { progress, resolve, reject }));
  sendRun({ ...body, id });
  return { id, done };
}

export function cancelRun(id: number): void {
  sendRun({ type: 'cancelRun', id });
}

export function receiveRun(m: RunToWebview): void {
  const w = waits.get(m.id);
  if (!w) return;
  if (m.type === 'runProgress') return w.progress?.(m);
  waits.delete(m.id);
  if (m.ok) w.resolve({ intervention: m.intervention, ranking: m.ranking });
  else w.reject(Object.assign(new Error(m.error), { cancelled: m.cancelled }));
}

/** Above the toolbar while an intervened run is on screen: what was removed, and the way back. */
export function showRunBanner(init: ViewInit, post: (m: WebviewToHost) => void): void {
  const app = document.getElementById('app');
  const run = init.run;
  if (!app || !run) return;
  const back = el('button', { id: 'run-back', type: 'button' }, ['Back to the plain run']);
  back.addEventListener('click', () => post({ type: 'showRun', resultId: init.resultId, run: 'plain', entries: run.entries.join(','), mode: run.mode }));
  const what = `${run.entries.join(', ')} removed (${run.mode === 'mean' ? 'replaced by the mean' : 'zeroed'})`;
  app.prepend(
    el('div', { id: 'run-banner', class: 'run-banner', role: 'status' }, [
      el('strong', {}, ['Intervened run: ']),
      `${what}. Every tab shows this run; Diff shows it minus the plain run. `,
      back,
    ]),
  );
}
