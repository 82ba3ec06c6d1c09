// The Enhanced Mask Decoder's two passes on one input, for a view that shows them beside the encoder's layers: the
// forward, then the EMD passes graph on the state entering the last layer, in the encoder's own process.
import type { EmdPass, EmdPassesResult, ExplainInput } from '../api';
import { emdLengthProblem, emdPlan } from '../checkpoint/emd';
import { scaleOf, termFlags } from '../graph/deberta-io';
import { emdAttentionKinds, EmdOutput } from '../graph/emd-graph';
import { LensError } from '../errors';
import { prepareInput } from './input';
import type { RunContext } from './run-context';

export async function emdPassesWith(model: RunContext, input: ExplainInput, signal?: AbortSignal): Promise<EmdPassesResult> {
  const t0 = performance.now();
  const ck = model.checkpoint;
  const s = ck.spec;
  const plan = emdPlan(ck, model.heads.heads);
  if (plan.kind === 'last-layer')
    throw new LensError(`${plan.note}: explain's last layer shows it, there are no extra passes`, 'unsupported');
  if (plan.kind === 'plain')
    throw new LensError(
      plan.note ??
        `${ck.name} has no Enhanced Mask Decoder: it needs microsoft's lm_predictions.lm_head.* head and the absolute position table`,
      'unsupported',
    );
  const prepared = await prepareInput(model, input, signal);
  const n = prepared.ids.length;
  const tooLong = emdLengthProblem(ck, plan.rows, n);
  if (tooLong) throw new LensError(tooLong.replace(/: predictions come from .*; /, ': '), 'invalid-input');
  const t1 = performance.now();
  const kinds = emdAttentionKinds(termFlags(s));
  const fetches = [
    EmdOutput.kvHidden,
    EmdOutput.position,
    EmdOutput.query,
    ...[0, 1].flatMap((k) => [EmdOutput.hidden(k), ...kinds.map((kind) => EmdOutput.attention(k, kind))]),
  ];
  const run = await model.heads.runEmdPasses(prepared.ids, prepared.tokenTypes, fetches, signal);
  const get = (name: string) => run.outputs.get(name)!;
  const pass = (k: number): EmdPass => ({
    hidden: get(EmdOutput.hidden(k)),
    c2c: get(EmdOutput.attention(k, 'c2c')),
    ...(kinds.includes('c2p') ? { c2p: get(EmdOutput.attention(k, 'c2p')) } : {}),
    ...(kinds.includes('p2c') ? { p2c: get(EmdOutput.attention(k, 'p2c')) } : {}),
    probs: get(EmdOutput.attention(k, 'probs')),
  });
  return {
    model: { ...model.info, execution_provider: model.session.provider },
    input_ids: prepared.ids,
    tokens: prepared.tokens,
    layer: s.numLayers - 1,
    heads: s.numHeads,
    hidden_size: s.hiddenSize,
    scale: scaleOf(s),
    kv_hidden: get(EmdOutput.kvHidden),
    position: get(EmdOutput.position),
    query: get(EmdOutput.query),
    passes: [pass(0), pass(1)],
    timings: { tokenize_ms: t1 - t0, forward_ms: run.forwardMs, passes_ms: run.passesMs, total_ms: performance.now() - t0 },
  };
}
