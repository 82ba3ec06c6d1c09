// The input side of every verb: text or ids to checked tokens, the length and memory limits, int64 feeds, and the
// plain forward pass. Below the verbs: they import it, it imports no verb.
import type { ExplainInput } from '../api';
import { LensError } from '../errors';
import { LAST_HIDDEN } from '../graph/deberta-io';
import { graphInputs, type Int64Feeds } from '../graph/graph-inputs';
import { formatBytes } from '../../shared/format';
import { availableMemory, estimateMemory } from '../memory/estimate';
import type { FeedTensor } from '../runtime/messages';
import { missingTokenizerError } from '../tokenizer';
import { NO_SEP } from '../tokenizer/specials';
import type { Token } from '../types';
import { cutMessage, findCut, InputTooLongError } from './input-cut';
import type { RunBase } from './run-base';

export interface Prepared {
  ids: number[];
  tokens: Token[];
  /** Absent: all 0 (one text, or ids). */
  tokenTypes?: number[];
  /** How far the pair's token offsets were moved (ExplainInput.pairOffset); 0 without one. */
  pairOffset?: number;
}

/** text → [CLS] tokens [SEP] with offsets; ids → as given (no specials added), validated against the vocabulary.
 *  A text over the length limit is refused with where the cut would fall (./input-cut.ts). Tokenizing runs in the
 *  tokenizer's thread, under its time budget. */
export async function prepareInput(
  model: Pick<RunBase, 'tokenizer' | 'checkpoint'> & Partial<Pick<RunBase, 'maxTokens' | 'maxTokensName'>>,
  input: ExplainInput,
  signal?: AbortSignal,
): Promise<Prepared> {
  const spec = model.checkpoint.spec;
  const tok = model.tokenizer;
  if ((input.text === undefined) === (input.ids === undefined))
    throw new LensError('give either text or ids to explain, not both or neither');
  if (input.pair !== undefined && input.text === undefined)
    throw new LensError('a sentence pair needs text for its first part; ids are fed as given');
  const pairOffset = input.pairOffset ?? 0;
  if (!Number.isInteger(pairOffset) || pairOffset < 0 || (pairOffset > 0 && (input.pair === undefined || pairOffset < input.text!.length)))
    throw new LensError(`pairOffset ${pairOffset} must be a whole number, at or past the first text's end, and comes only with a pair`);
  if (input.ids !== undefined) {
    if (input.ids.length === 0) throw new LensError('no ids to explain: the id list is empty');
    const specials = tok ? new Set(Object.values(tok.special)) : new Set<number>();
    input.ids.forEach((id, k) => {
      if (!Number.isInteger(id) || id < 0 || id >= spec.vocabSize) {
        throw new LensError(`id ${id} at position ${k} is outside the model's vocabulary (0…${spec.vocabSize - 1})`);
      }
    });
    const pieces = tok ? await tok.pieces(input.ids, signal) : [];
    const tokens = input.ids.map((id, k): Token => ({ id, text: pieces[k] ?? `#${id}`, start: 0, end: 0, special: specials.has(id) }));
    return { ids: input.ids, tokens };
  }
  if (!tok) throw missingTokenizerError(model.checkpoint.dir, spec.architecture);
  if (tok.special.sep === NO_SEP) {
    const form = input.pair !== undefined ? 'a pair is read as [CLS] A [SEP] B [SEP]' : 'a text is read as [CLS] text [SEP]';
    throw new LensError(
      `${model.checkpoint.dir}: the tokenizer has no [SEP] token (sep_token in tokenizer_config.json or special_tokens_map.json, and the vocabulary): ${form}, so the input cannot be built; explain ids instead (--ids), or use the tokenizer files that came with the model`,
      'invalid-input',
    );
  }
  const { tokens, ids, tokenTypeIds } = await tok.modelInput(input.text!, input.pair, signal);
  // [CLS] and [SEP] cover no characters; a [MASK] written in the text does, and counts as text.
  if (tokens.every((t) => t.special && t.start === t.end)) throw new LensError('nothing to explain: the text is empty or only whitespace');
  for (const t of tokens) {
    if (t.id >= spec.vocabSize)
      throw new LensError(
        `the tokenizer produced id ${t.id} for "${t.text}", outside the model's vocabulary of ${spec.vocabSize}: the tokenizer files do not belong to this model`,
        'corrupt',
      );
  }
  // A pair is [CLS] A [SEP] B [SEP] on every model, as Hugging Face builds it. With type_vocab_size 0 (DeBERTa-v3)
  // the model adds no token-type embedding, so the types are not fed (graphInputs); a one-row table could not hold
  // the second text's type 1, which Hugging Face would index past.
  if (input.pair !== undefined && spec.typeVocabSize === 1) {
    throw new LensError(
      `this model has 1 token type (type_vocab_size in config.json), but a pair's second text has type 1: explain one text, or fix the config`,
      'invalid-input',
    );
  }
  // The cut is named in the texts' own offsets, before the pair's are moved.
  refuseCut(model, tokens, input.pair !== undefined ? tokenTypeIds : undefined, input.text!, input.pair);
  if (pairOffset > 0)
    tokenTypeIds.forEach((type, k) => {
      const t = tokens[k]!;
      if (type === 1) tokens[k] = { ...t, start: t.start + pairOffset, end: t.end + pairOffset };
    });
  return { ids, tokens, ...(input.pair !== undefined ? { tokenTypes: tokenTypeIds, pairOffset } : {}) };
}

/** The tightest of the maxTokens limit and an absolute-position table; over it, the refusal names the cut. */
function refuseCut(
  model: Partial<Pick<RunBase, 'maxTokens' | 'maxTokensName' | 'checkpoint'>>,
  tokens: Token[],
  types: number[] | undefined,
  text: string,
  pair: string | undefined,
): void {
  const spec = model.checkpoint!.spec;
  const positions = spec.positionBiasedInput ? spec.maxPositionEmbeddings : Infinity;
  const max = model.maxTokens ?? Infinity;
  const [limit, by] = positions < max ? [positions, 'positions' as const] : [max, 'maxTokens' as const];
  const cut = findCut(tokens, types, { text: text.length, pair: pair?.length }, limit, by);
  if (cut) throw new InputTooLongError(cutMessage(cut, cut.part === 'pair' ? pair! : text, model.maxTokensName ?? 'maxTokens'), cut);
}

/** Refuses a length over the limit, beyond an absolute-position table, or beyond what memory can hold. */
export function checkLength(model: RunBase, n: number, available = availableMemory()): void {
  const spec = model.checkpoint.spec;
  const setting = model.maxTokensName ?? 'maxTokens';
  if (n > model.maxTokens) {
    throw new LensError(
      `the input is ${n} tokens, over the limit of ${model.maxTokens} (${setting}): select less text or raise the limit`,
      'too-long',
    );
  }
  if (spec.positionBiasedInput && n > spec.maxPositionEmbeddings) {
    throw new LensError(
      `the input is ${n} tokens, but this model has absolute positions for only ${spec.maxPositionEmbeddings}: select less text`,
      'too-long',
    );
  }
  const need = estimateMemory(spec, n).total;
  if (need > available) {
    throw new LensError(
      `the input is ${n} tokens: explaining it needs about ${formatBytes(need, 'decimal')} of memory and ${formatBytes(available, 'decimal')} is free: select less text, free memory, or lower ${setting} so such inputs are refused up front`,
      'too-long',
    );
  }
}

export function int64Feeds(feeds: Int64Feeds): Record<string, FeedTensor> {
  const out: Record<string, FeedTensor> = {};
  for (const [name, data] of Object.entries(feeds)) out[name] = { type: 'int64', data, dims: [data.length] };
  return out;
}
/** The forward pass alone, returning the last hidden state: the benchmark's baseline and the parity tests' check. */
export async function forwardOnly(
  model: RunBase,
  ids: number[],
  signal?: AbortSignal,
  tokenTypes?: number[],
): Promise<{ ms: number; hidden: Float32Array }> {
  checkLength(model, ids.length);
  const { outputs, ms } = await model.session.run(
    'forward',
    int64Feeds(graphInputs(model.checkpoint.spec, ids, tokenTypes)),
    [LAST_HIDDEN],
    signal,
  );
  try {
    return { ms, hidden: outputs.read(LAST_HIDDEN) };
  } finally {
    outputs.release();
  }
}
