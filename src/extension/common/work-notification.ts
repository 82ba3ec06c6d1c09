// A sweep's progress notification (TrackWork): stage, layer i of L, count and time left, a bar that fills with
// the share done, and Cancel wired to the run's AbortController.
import * as vscode from 'vscode';
import { percentStep, sweepText, type TrackWork, type WorkStep } from './work-progress';

export const trackInNotification: TrackWork = (title, abort) => {
  const t0 = performance.now();
  let report: ((step: WorkStep) => void) | undefined;
  let pending: WorkStep | undefined;
  let finish: (() => void) | undefined;
  let ended = false;
  let shown = 0;
  void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => abort.abort());
    report = (step) => {
      const increment = percentStep(shown, step.done, step.total);
      shown = Math.max(shown, Math.min(step.done, step.total));
      progress.report({ message: sweepText({ ...step, elapsedMs: performance.now() - t0 }), increment });
    };
    if (pending) report(pending);
    return ended ? Promise.resolve() : new Promise<void>((resolve) => (finish = resolve));
  });
  return {
    report: (step) => (report ? report(step) : (pending = step)),
    done: () => {
      ended = true;
      finish?.();
    },
  };
};
