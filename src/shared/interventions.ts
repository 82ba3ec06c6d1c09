// Messages of the Intervention and Head ranking tabs: runs of the model itself (an intervention rerun, a head-ranking
// sweep, the intervened run's attention), which take a while, report progress and can be cancelled — unlike the
// matrix requests, which read the result the host keeps. Types and validation only (both builds import this).
import type { TermName } from './kinds';
import type { Asking } from './messaging/message-handler';
import { csvCell } from './markup-text';
import { isInt } from './protocol/checks';
import { parsePatchMessage, type PatchSetup, type PatchToHost, type PatchView } from './patching';

export type RemovalMode = 'zero' | 'mean';

/** One position's top-k before and after, with the followed token. */
export interface InterventionRow {
  position: number;
  /** The token at the position in the input ("[MASK]", or the word masked for the prediction). */
  token: string;
  source: 'input' | 'masked';
  before: { token: string; prob: number }[];
  after: { token: string; prob: number }[];
  /** KL(before ‖ after), nats, over the whole vocabulary. */
  kl: number;
  followed: {
    token: string;
    which: 'original' | 'top1_before';
    before: { logprob: number; rank: number };
    after: { logprob: number; rank: number };
  };
}

export interface InterventionView {
  entries: string[];
  mode: RemovalMode;
  firstLayer: number;
  layersRerun: number;
  /** Masked-LM rows (empty on a task head's checkpoint). */
  rows: InterventionRow[];
  /** A task head's checkpoint: its kind and its decision before and after the intervention. */
  task?: PanelTask;
  taskBefore?: DecisionView;
  taskAfter?: DecisionView;
  ms: number;
}

/** The engine's head kinds, as the panel names them. */
export type PanelTask =
  'sequence-classification' | 'token-classification' | 'question-answering' | 'multiple-choice' | 'masked-lm' | 'replaced-token-detection';

/** One label of a task head: its logit and its score (softmax, sigmoid, or the logit itself for regression). */
export interface LabelView {
  id: number;
  label: string;
  logit: number;
  score: number;
}

/** A task head's decision on the explained input, as the Intervention and Head ranking tabs show it. */
export type DecisionView =
  | { kind: 'labels'; scoreFunction: 'softmax' | 'sigmoid' | 'none'; labels: LabelView[]; predicted: number | null }
  | { kind: 'tokens'; labelNames: string[]; tokens: { position: number; token: string; labels: LabelView[]; predicted: number }[] }
  | { kind: 'span'; answer: { text: string | null; startToken: number; endToken: number; score: number } | null }
  | { kind: 'choices'; choices: { index: number; text: string; logit: number; score: number }[]; predicted: number };

/** What the checkpoint behind the explained input decides, and whether the Head ranking tab can follow it. */
export interface DecisionInfo {
  /** The head that answers (null: the checkpoint has no head at all). */
  task: PanelTask | null;
  /** A task head's decision on the explained input (absent for masked-LM and RTD heads). */
  decision?: DecisionView;
  /** Set when nothing can be ranked here: one line saying why and what to do. */
  unrankable?: string;
  /** Set when the Patching tab has nothing to follow here: one line saying why and what to do. A multiple-choice
   *  head ranks nothing but patches (the choice on screen), so the two are apart. */
  unpatchable?: string;
}

/** A decision nothing can follow (no head, or no answer from the host): the one line for both tabs. */
export function nothingToFollow(why: string): DecisionInfo {
  return { task: null, unrankable: why, unpatchable: why };
}

export interface RankingCell {
  layer: number;
  head: number;
  term: TermName;
  drop: number;
  /** Masked-LM rankings: the followed token after the removal. */
  logprobAfter?: number;
  rankAfter?: number;
  top1After?: string;
  /** Task-head rankings: the target's logit (QA: start + end logit) and score (absent for QA) after the removal. */
  logitAfter?: number;
  scoreAfter?: number;
}

/** What a task-head ranking follows: one label's logit (at one token for token classification), or the answer span. */
export type RankingTarget =
  | { kind: 'label'; id: number; label: string; position?: number; token?: string; logit: number; score: number }
  | { kind: 'span'; startToken: number; endToken: number; text: string; logit: number };

export interface RankingView {
  terms: TermName[];
  mode: RemovalMode;
  /** Rows of the grid: the encoder's layers, or with `firstLayer` the EMD's two passes (layers firstLayer, + 1). */
  layers: number;
  firstLayer?: number;
  heads: number;
  position: number;
  token: string;
  /** Masked-LM: the token whose log-probability is followed. */
  followed?: { token: string; which: 'original' | 'top1_before'; logprob: number; rank: number };
  /** Task heads: the head's kind and the decision followed (the drop is in its logit). */
  task?: PanelTask;
  target?: RankingTarget;
  /** Per term, the drop in the followed value (log p, or the target's logit) as [layers][heads]. */
  grid: Partial<Record<TermName, number[][]>>;
  /** Every cell, largest drop first. */
  ranking: RankingCell[];
  ms: number;
}

export type RunToHost =
  /** Remove `entries` ("1.0:c2p,4.*:p2c") and rerun; position null = every [MASK]. */
  | { type: 'intervene'; id: number; resultId: number; entries: string; mode: RemovalMode; position: number | null; top: number }
  /** Rank heads at one position (null = the first [MASK]; token classification: the first word) by removing each
   *  head's term alone; `label`: a classifier's label id followed (absent = the predicted label). */
  | {
      type: 'sweep';
      id: number;
      resultId: number;
      terms: TermName[];
      mode: RemovalMode;
      position: number | null;
      label?: number;
      /** Rank the Enhanced Mask Decoder's heads (masked-LM with EMD passes) instead of the encoder's. */
      emd?: boolean;
    }
  /** What the checkpoint decides on the explained input (its head, a task head's labels and scores). */
  | { type: 'decision'; id: number; resultId: number }
  | { type: 'cancelRun'; id: number }
  /** Show the intervened run's attention in every tab (the Diff then compares it with the plain run), or the plain run again. */
  | { type: 'showRun'; resultId: number; run: 'ablated' | 'plain'; entries: string; mode: RemovalMode }
  | { type: 'exportRanking'; format: 'json' | 'csv' }
  /** The Patching tab's runs and exports (./patching.ts). */
  | PatchToHost;

export type RunToWebview =
  | { type: 'runProgress'; id: number; done: number; total: number; layer: number }
  | ({
      type: 'runResult';
      id: number;
      ok: true;
      intervention?: InterventionView;
      ranking?: RankingView;
      decision?: DecisionInfo;
    } & PatchReply)
  | { type: 'runResult'; id: number; ok: false; error: string; cancelled: boolean };

/** The runs the view asks for, by name: [the message without its id, what the run gives]. */
export type RunRequests = {
  intervene: [Omit<Extract<RunToHost, { type: 'intervene' }>, 'id'>, RunReply];
  sweep: [Omit<Extract<RunToHost, { type: 'sweep' }>, 'id'>, RunReply];
  decision: [Omit<Extract<RunToHost, { type: 'decision' }>, 'id'>, RunReply];
  patchSetup: [Omit<Extract<RunToHost, { type: 'patchSetup' }>, 'id'>, RunReply];
  patch: [Omit<Extract<RunToHost, { type: 'patch' }>, 'id'>, RunReply];
};
export type RunRequest = RunRequests[keyof RunRequests][0];
/** The Patching tab's answers: the explained input (to start the corrupted text from), or a trace's grid. */
export interface PatchReply {
  patchSetup?: PatchSetup;
  patching?: PatchView;
}
export interface RunReply extends PatchReply {
  intervention?: InterventionView;
  ranking?: RankingView;
  decision?: DecisionInfo;
}
export type RunProgress = { done: number; total: number; layer: number };

/**
 * The view's side of a run on the wire: the request with its id added, `runProgress` while it runs, and one
 * `runResult` (`cancelled` when `cancelRun` stopped it). No scope: a run names its result in the request.
 */
export const runAsking: Asking<RunRequests, void, RunToHost, RunToWebview, RunProgress> = {
  request: (id, body) => ({ ...body, id }),
  readReply: (m) => {
    if (m.type === 'runProgress') return { id: m.id, progress: m };
    if (m.ok)
      return {
        id: m.id,
        outcome: {
          ok: true,
          reply: {
            intervention: m.intervention,
            ranking: m.ranking,
            ...(m.decision ? { decision: m.decision } : {}),
            ...(m.patchSetup ? { patchSetup: m.patchSetup } : {}),
            ...(m.patching ? { patching: m.patching } : {}),
          },
        },
      };
    return { id: m.id, outcome: { ok: false, error: m.error, cancelled: m.cancelled } };
  },
};

/** What the view says about the run it shows, when it is not the plain explain. */
export interface RunLabel {
  entries: string[];
  mode: RemovalMode;
}

const isMode = (x: unknown): x is RemovalMode => x === 'zero' || x === 'mean';
const isPosition = (x: unknown): x is number | null => x === null || (isInt(x) && x >= 0);
/** An intervention spec as the view builds it: LAYER.HEAD:TERM entries (checked fully by the engine). */
const isEntries = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= 4000 && /^[\d.*:a-z2,\s]+$/.test(x);

/** Validates a run message from the webview (untrusted input for the host); anything else gives undefined. */
export function parseRunMessage(x: unknown): RunToHost | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const m = x as Record<string, unknown>;
  switch (m.type) {
    case 'intervene':
      return isInt(m.id) &&
        isInt(m.resultId) &&
        isEntries(m.entries) &&
        isMode(m.mode) &&
        isPosition(m.position) &&
        isInt(m.top) &&
        m.top >= 1 &&
        m.top <= 50
        ? { type: 'intervene', id: m.id, resultId: m.resultId, entries: m.entries, mode: m.mode, position: m.position, top: m.top }
        : undefined;
    case 'sweep': {
      const terms = Array.isArray(m.terms) ? m.terms.filter((t): t is TermName => t === 'c2c' || t === 'c2p' || t === 'p2c') : [];
      const label = m.label === undefined ? undefined : isInt(m.label) && m.label >= 0 ? m.label : null;
      return isInt(m.id) &&
        isInt(m.resultId) &&
        terms.length > 0 &&
        terms.length === (m.terms as unknown[]).length &&
        isMode(m.mode) &&
        isPosition(m.position) &&
        label !== null
        ? {
            type: 'sweep',
            id: m.id,
            resultId: m.resultId,
            terms,
            mode: m.mode,
            position: m.position,
            ...(label === undefined ? {} : { label }),
            ...(m.emd === true ? { emd: true } : {}),
          }
        : undefined;
    }
    case 'decision':
      return isInt(m.id) && isInt(m.resultId) ? { type: 'decision', id: m.id, resultId: m.resultId } : undefined;
    case 'cancelRun':
      return isInt(m.id) ? { type: 'cancelRun', id: m.id } : undefined;
    case 'showRun':
      return isInt(m.resultId) && (m.run === 'ablated' || m.run === 'plain') && isEntries(m.entries) && isMode(m.mode)
        ? { type: 'showRun', resultId: m.resultId, run: m.run, entries: m.entries, mode: m.mode }
        : undefined;
    case 'exportRanking':
      return m.format === 'json' || m.format === 'csv' ? { type: 'exportRanking', format: m.format } : undefined;
    default:
      return parsePatchMessage(m);
  }
}

/** One removal the view offers: a head's term, a whole head, or one term in every head of a layer. */
export function entryOf(layer: number, head: number | '*', term: TermName | 'all'): string {
  return `${layer}.${head}:${term}`;
}

/** The ranking as CSV: one row per cell, largest drop first; a task-head ranking names its target on every row. */
export function rankingCsv(r: RankingView): string {
  const t = r.target;
  if (t) {
    const what = t.kind === 'label' ? [csvCell(t.label), t.id, t.position ?? ''] : [csvCell(t.text), `${t.startToken}-${t.endToken}`, ''];
    const lines = ['rank,layer,head,term,drop,logit_after,score_after,target,target_id,target_position'];
    r.ranking.forEach((c, k) =>
      lines.push([k + 1, c.layer, c.head, c.term, c.drop, c.logitAfter ?? '', c.scoreAfter ?? '', ...what].join(',')),
    );
    return `${lines.join('\n')}\n`;
  }
  const lines = ['rank,layer,head,term,drop,logprob_after,rank_after,top1_after'];
  r.ranking.forEach((c, k) =>
    lines.push([k + 1, c.layer, c.head, c.term, c.drop, c.logprobAfter ?? '', c.rankAfter ?? '', csvCell(c.top1After ?? '')].join(',')),
  );
  return `${lines.join('\n')}\n`;
}

/** Where a token-classification ranking looks by default: the first token that is not a special. */
export function firstWordPosition(tokens: readonly { special: boolean }[]): number {
  const k = tokens.findIndex((t) => !t.special);
  return k < 0 ? 0 : k;
}

/** Whether a head ranks by a label the reader picks (a classifier), not a masked token or an answer span. */
export function ranksByLabel(task: PanelTask | null | undefined): boolean {
  return task === 'sequence-classification' || task === 'token-classification';
}
