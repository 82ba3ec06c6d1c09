// What the checkpoint behind the result on screen decides (its head's kind, a task head's labels and scores), asked
// of the host once per result and shared by the Intervention and Head ranking tabs.
import { nothingToFollow, type DecisionInfo } from '../../../src/shared/interventions';
import { startRun } from '../state/run-channel';

let asked: { resultId: number; info: Promise<DecisionInfo> } | undefined;

/** The decision on result `resultId` (a failed question is asked again next time). */
export function decisionFor(resultId: number): Promise<DecisionInfo> {
  if (asked?.resultId === resultId) return asked.info;
  const info = startRun({ type: 'decision', resultId }).done.then((r) => r.decision ?? nothingToFollow('The host gave no answer.'));
  asked = { resultId, info };
  info.catch(() => {
    if (asked?.info === info) asked = undefined;
  });
  return info;
}
