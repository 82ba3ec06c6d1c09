// Reading the heads' answers: which positions a verb predicts, the top-k count, the MLM rows of one head run and
// the tokens' names. Shared by predict, ablate and sweep; below them.
import type { TopToken } from '../api';
import type { Checkpoint } from '../checkpoint';
import { findHeads, noHeadMessage } from '../checkpoint/heads';
import { at, first } from '../../shared/checked';
import { LensError } from '../errors';
import { HeadOutput } from '../graph/head-graph';
import type { RunContext } from './run-context';

export const DEFAULT_TOP = 5;

const asInt32 = (f: Float32Array) => new Int32Array(f.buffer, f.byteOffset, f.length);

/** The [MASK]s of the input and the asked positions (validated) that must be masked first, one run each. */
export function positionsToPredict(
  model: Pick<RunContext, 'checkpoint' | 'tokenizer' | 'heads'>,
  ids: number[],
  positions: number[] | undefined,
) {
  const ck = model.checkpoint;
  const n = ids.length;
  const maskId = model.tokenizer?.special.mask;
  const inputMasks = maskId === undefined ? [] : ids.flatMap((id, i) => (id === maskId ? [i] : []));
  const asked = [...new Set(positions ?? [])].sort((a, b) => a - b);
  for (const p of asked) {
    if (!Number.isInteger(p) || p < 0 || p >= n)
      throw new LensError(`position ${p} does not exist: the input has tokens 0…${n - 1} ([CLS] is 0)`);
  }
  const toMask = asked.filter((p) => !inputMasks.includes(p));
  if (!model.heads.heads.mlm && asked.length > 0) {
    throw new LensError(
      `${ck.name} has only a replaced-token-detection head (mask_predictions.*): positions cannot be predicted without a masked-LM head`,
      'unsupported',
    );
  }
  if (model.heads.heads.mlm && toMask.length > 0 && maskId === undefined) {
    throw new LensError(
      `${ck.dir} has no tokenizer, so the [MASK] id is unknown: add the tokenizer files, or put the [MASK] id into the ids yourself`,
      'not-found',
    );
  }
  return { maskId, inputMasks, asked, toMask };
}

/** Checks a top-k count against the vocabulary. */
export function checkTop(model: Pick<RunContext, 'checkpoint'>, top: number | undefined): number {
  const V = model.checkpoint.spec.vocabSize;
  const k = top ?? DEFAULT_TOP;
  if (!Number.isInteger(k) || k < 1 || k > V) throw new LensError(`top must be an integer from 1 to the vocabulary size ${V}, got ${k}`);
  return k;
}

/** One MLM row: the top k (k ≥ 1, so `first` is top[0]) and the followed token's logit and rank. */
export interface PredictionRow {
  top: TopToken[];
  first: TopToken;
  target: TopToken & { rank: number };
}

/** The MLM rows of one head run: top k (tokens named "#id" until nameTokens) and each row's target logit and rank. */
export function readPredictions(read: (name: string) => Float32Array, positions: number[], k: number): PredictionRow[] {
  if (positions.length === 0) return [];
  const logits = read(HeadOutput.topLogits),
    topIds = asInt32(read(HeadOutput.topIds)),
    lse = read(HeadOutput.logSumExp);
  const targetLogits = read(HeadOutput.targetLogits),
    ranks = asInt32(read(HeadOutput.targetRanks));
  // The head graph returns k values for each of the rows asked for: r < positions.length, c < k.
  return positions.map((_, r) => {
    const rowLse = lse[r]!,
      targetLogit = targetLogits[r]!;
    const prob = (logit: number) => Math.exp(logit - rowLse);
    const top = Array.from({ length: k }, (_, c) => {
      const id = topIds[r * k + c]!,
        logit = logits[r * k + c]!;
      return { id, token: `#${id}`, logit, prob: prob(logit) };
    });
    return {
      top,
      first: first(top, 'a top-k row'),
      target: { id: -1, token: '', logit: targetLogit, prob: prob(targetLogit), rank: ranks[r]! + 1 },
    };
  });
}

/** readPredictions for one position. */
export function readPrediction(read: (name: string) => Float32Array, position: number, k: number): PredictionRow {
  return first(readPredictions(read, [position], k), 'the prediction rows');
}

/** Names every token shown by its piece, looked up in the tokenizer's thread once. */
export async function nameTokens(
  model: Pick<RunContext, 'tokenizer'>,
  shown: { id: number; token: string }[],
  signal?: AbortSignal,
): Promise<void> {
  const ids = [...new Set(shown.map((t) => t.id))];
  const names = model.tokenizer ? await model.tokenizer.pieces(ids, signal) : [];
  const named = new Map(ids.map((id, i) => [id, names[i] ?? `#${id}`]));
  for (const t of shown) t.token = named.get(t.id)!;
}

/** An intervention's effect is shown on the masked-LM head's predictions, or (`task`) on a task head's output. */
export function requireMlmHead(ck: Checkpoint, task = false): void {
  const heads = findHeads(ck);
  if (heads.mlm || (task && heads.task)) return;
  if (heads.taskProblem) throw new LensError(heads.taskProblem, 'invalid-input');
  if (heads.task)
    throw new LensError(
      `${ck.name} has a ${heads.task.kind} head and no masked-LM head: a head ranking follows a masked token's log-probability`,
      'unsupported',
    );
  throw new LensError(
    heads.rtd
      ? `${ck.name} has no masked-LM head (cls.predictions.* or lm_predictions.lm_head.*): an intervention's effect is shown on its predictions`
      : noHeadMessage(ck),
    'unsupported',
  );
}

/** The one masked-LM position a verb follows (`what`: the verb's words for the refusal): the asked one, masked first
 *  unless it is a [MASK]; else the input's first [MASK]. */
export function followedPosition(model: RunContext, ids: number[], asked: number | undefined, what: string) {
  const { maskId, inputMasks, toMask } = positionsToPredict(model, ids, asked === undefined ? undefined : [asked]);
  if (asked === undefined) {
    if (inputMasks.length === 0) {
      throw new LensError(
        `nothing to ${what}: the input has no [MASK] token and no position was given; write [MASK] where a word should be predicted, or name a position (--position 3)`,
      );
    }
    return { position: first(inputMasks, 'the [MASK]s of the input'), runIds: ids, original: undefined };
  }
  if (toMask.length === 0) return { position: asked, runIds: ids, original: undefined };
  const runIds = ids.slice();
  runIds[asked] = maskId!;
  return { position: asked, runIds, original: ids[asked] };
}

/** The masked-LM head on `variants` rows of `data`, each following `token` (one position a variant, as sweep and
 *  occlusion feed it): per variant the token's log-probability, its rank and the first choice. */
export async function rateTokenInVariants(
  model: RunContext,
  data: Float32Array,
  variants: number,
  token: number,
  signal: AbortSignal | undefined,
  addMs: (ms: number) => void,
): Promise<{ logprob: number; rank: number; firstId: number }[]> {
  const idx = Array.from({ length: variants }, (_, k) => k);
  const res = await model.heads.run(
    data,
    variants,
    idx,
    idx.map(() => token),
    1,
    false,
    signal,
  );
  addMs(res.ms);
  const ranked = readPredictions(res.read, idx, 1);
  const lses = res.read(HeadOutput.logSumExp);
  return idx.map((k) => {
    const r = at(ranked, k, 'variant');
    return { logprob: r.target.logit - at(lses, k, 'variant'), rank: r.target.rank, firstId: r.first.id };
  });
}
