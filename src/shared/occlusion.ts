// "Which words made it say that?": token attribution to a decision by occlusion (each token masked, or removed, and
// the followed logit read again), as the panel asks for it, shows it on the strip and the editor marks it. Types,
// validation and the pure colour buckets (host and webview import this).
import { type DecisionTarget, parseDecisionTarget } from './decision';
import { isInt } from './protocol/checks';

export type OcclusionMethodName = 'mask' | 'remove';
/** How pieces join into the words taken out whole (the panel's merge): prose words or code identifiers. */
export type OcclusionMerge = 'words' | 'identifiers';

export type Attribution =
  | { state: 'running'; done: number; total: number }
  | {
      state: 'ready';
      /** What was followed, as a person reads it ("“next” logit", "the answer span"). */
      followed: string;
      /** The followed value without any token taken out. */
      before: number;
      /** Per position: before − after (positive: the token supported the decision); null for specials. */
      mask?: (number | null)[];
      remove?: (number | null)[];
      /** Each word was taken out whole (every piece of a word holds the word's score): the merge and the words'
       *  positions. Absent: each token alone. */
      words?: { merge: OcclusionMerge; groups: number[][] };
      ms: number;
    }
  | { state: 'error'; message: string };

/** Webview → host: attribute the decision to the tokens. */
export interface OccludeMessage {
  type: 'occlude';
  resultId: number;
  target: DecisionTarget;
  /** Take out each word whole (the merge on screen) instead of each token. */
  merge?: OcclusionMerge;
}
/** Webview → host: stop the attribution in flight. */
export interface CancelOcclusionMessage {
  type: 'cancelOcclusion';
  resultId: number;
}
/** Host → webview: the attribution's progress or outcome. */
export interface OcclusionMessage {
  type: 'occlusion';
  resultId: number;
  attribution: Attribution;
}

export function parseOcclusionMessage(m: Record<string, unknown>): OccludeMessage | CancelOcclusionMessage | undefined {
  if (!isInt(m.resultId)) return undefined;
  if (m.type === 'cancelOcclusion') return { type: 'cancelOcclusion', resultId: m.resultId };
  const target = m.type === 'occlude' ? parseDecisionTarget(m.target) : undefined;
  if (!target) return undefined;
  if (m.merge === undefined) return { type: 'occlude', resultId: m.resultId, target };
  return m.merge === 'words' || m.merge === 'identifiers' ? { type: 'occlude', resultId: m.resultId, target, merge: m.merge } : undefined;
}

/** Signed strength in [−1, 1] of each position against the largest |score| (0 for null and for a score within 5% of
 *  zero: too small to colour). */
export function signedStrengths(scores: readonly (number | null)[]): number[] {
  const max = Math.max(0, ...scores.map((x) => (x === null || !Number.isFinite(x) ? 0 : Math.abs(x))));
  return scores.map((x) => {
    if (x === null || !Number.isFinite(x) || max === 0) return 0;
    const s = x / max;
    return Math.abs(s) < 0.05 ? 0 : s;
  });
}

/** The strongest tokens (or words: `groups`, named by their first position) each way: "for: cat +0.81, mat +0.40 ·
 *  against: dog −0.22". */
export function attributionLine(
  scores: readonly (number | null)[],
  label: (i: number) => string,
  count = 3,
  groups?: readonly (readonly number[])[],
): string {
  const units = groups ? groups.map((g) => g[0] ?? -1) : scores.map((_, i) => i);
  const ranked = units.flatMap((i) => {
    const s = scores[i];
    return s === null || s === undefined || !Number.isFinite(s) ? [] : [{ s, i }];
  });
  const fmt = (x: number) => `${x > 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
  const pick = (sign: 1 | -1) =>
    ranked
      .filter((r) => r.s * sign > 0)
      .sort((a, b) => sign * (b.s - a.s))
      .slice(0, count)
      .map((r) => `${label(r.i)} ${fmt(r.s)}`)
      .join(', ');
  const [pro, con] = [pick(1), pick(-1)];
  return [pro && `for: ${pro}`, con && `against: ${con}`].filter(Boolean).join(' · ') || 'no token moves it';
}
