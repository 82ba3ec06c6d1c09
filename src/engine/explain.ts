import type { ExplainInput } from './api';
import { LensError } from './errors';
import { assertFiniteAttention } from './finite-outputs';
import { LAST_HIDDEN, scaleOf, termOutput } from './graph/deberta-graph';
import { graphInputs } from './graph/graph-inputs';
import type { OpenModel } from './model';
import { ExplainResult, type LayerTensors } from './result';
import type { FeedTensor } from './runtime/messages';
import { type SpillReader, spillRegistry } from './runtime/spill';
import type { TermName, Token } from './types';

interface Prepared {
  ids: number[];
  tokens: Token[];
}

/** text → [CLS] tokens [SEP] with offsets; ids → as given (no specials added), validated against the vocabulary.
 *  Tokenizing runs in the tokenizer's thread, under its time budget. */
export async function prepareInput(model: Pick<OpenModel, 'tokenizer' | 'checkpoint'>, input: ExplainInput, signal?: AbortSignal): Promise<Prepared> {
  const spec = model.checkpoint.spec;
  const tok = model.tokenizer;
  if ((input.text === undefined) === (input.ids === undefined)) throw new LensError('give either text or ids to explain, not both or neither');
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
  if (!tok) throw new LensError(`${model.checkpoint.dir} has no tokenizer (spm.model, tokenizer.json or vocab.json + merges.txt): add one, or pass ids`, 'not-found');
  const text = input.text!;
  const body = await tok.encode(text, signal);
  if (body.length === 0) throw new LensError('nothing to explain: the text is empty or only whitespace');
  const [clsText, sepText] = await tok.pieces([tok.special.cls, tok.special.sep], signal);
  const cls: Token = { id: tok.special.cls, text: clsText ?? '[CLS]', start: 0, end: 0, special: true };
  const sep: Token = { id: tok.special.sep, text: sepText ?? '[SEP]', start: text.length, end: text.length, special: true };
  for (const t of body) {
    if (t.id >= spec.vocabSize) throw new LensError(`the tokenizer produced id ${t.id} for "${t.text}", outside the model's vocabulary of ${spec.vocabSize}: the tokenizer files do not belong to this model`, 'corrupt');
  }
  const tokens = [cls, ...body, sep];
  return { ids: tokens.map((t) => t.id), tokens };
}

function checkLength(model: OpenModel, n: number): void {
  const spec = model.checkpoint.spec;
  if (n > model.maxTokens) {
    throw new LensError(`the input is ${n} tokens, over the limit of ${model.maxTokens} (maxTokens): select less text or raise the limit`, 'too-long');
  }
  if (spec.positionBiasedInput && n > spec.maxPositionEmbeddings) {
    throw new LensError(`the input is ${n} tokens, but this model has absolute positions for only ${spec.maxPositionEmbeddings}: select less text`, 'too-long');
  }
}

/** The requested layers, validated. */
function layersOf(model: OpenModel, layers?: number[]): number[] {
  const L = model.checkpoint.spec.numLayers;
  const out = layers ?? Array.from({ length: L }, (_, l) => l);
  for (const l of out) {
    if (!Number.isInteger(l) || l < 0 || l >= L) throw new LensError(`layer ${l} does not exist: this model has layers 0…${L - 1}`);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

function feedsFor(model: OpenModel, ids: number[]): Record<string, FeedTensor> {
  const feeds: Record<string, FeedTensor> = {};
  for (const [name, data] of Object.entries(graphInputs(model.checkpoint.spec, ids))) feeds[name] = { type: 'int64', data, dims: [data.length] };
  return feeds;
}

export async function explainWith(model: OpenModel, input: ExplainInput, signal?: AbortSignal): Promise<ExplainResult> {
  const t0 = performance.now();
  const { ids, tokens } = await prepareInput(model, input, signal);
  checkLength(model, ids.length);
  const layers = layersOf(model, input.layers);
  const t1 = performance.now();
  const kinds = ['c2c', ...model.info.terms.filter((t) => t !== 'c2c'), 'probs'] as const;
  const fetches = layers.flatMap((l) => kinds.map((k) => termOutput(l, k)));
  const { outputs, ms, spillMs } = await model.session.run(feedsFor(model, ids), fetches, signal);
  const tensors = layers.map((l) => lazyLayer(l, kinds, outputs));
  const info = { ...model.info, execution_provider: model.session.provider };
  const total = performance.now() - t0;
  const result = new ExplainResult(info, ids, tokens, scaleOf(model.checkpoint.spec), tensors, input.text, {
    tokenize_ms: t1 - t0,
    run_ms: ms,
    spill_ms: spillMs,
    total_ms: total,
  });
  result.onRelease(() => outputs.release());
  spillRegistry.register(result, { file: outputs.file, lease: outputs.lease });
  try {
    assertFiniteAttention(tensors, model.checkpoint.dir);
  } catch (e) {
    result.release();
    throw e;
  }
  return result;
}

/** A layer whose matrices are read from the run's spill file on first access, then kept. */
function lazyLayer(layer: number, kinds: readonly (TermName | 'probs')[], spill: SpillReader): LayerTensors {
  const out = { layer } as LayerTensors;
  for (const kind of kinds) {
    let data: Float32Array | undefined;
    Object.defineProperty(out, kind, { enumerable: true, get: () => (data ??= spill.read(termOutput(layer, kind))) });
  }
  return out;
}

/** The same graph without per-term outputs (only the last hidden state): the benchmark's baseline. */
export async function forwardOnly(model: OpenModel, ids: number[], signal?: AbortSignal): Promise<{ ms: number; hidden: Float32Array }> {
  checkLength(model, ids.length);
  const { outputs, ms } = await model.session.run(feedsFor(model, ids), [LAST_HIDDEN], signal);
  return { ms, hidden: outputs.read(LAST_HIDDEN) };
}
