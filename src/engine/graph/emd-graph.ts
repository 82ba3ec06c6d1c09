// DeBERTa's Enhanced Mask Decoder (EMD) as ONNX: the two extra passes of the last layer that microsoft/DeBERTa's
// MaskedLanguageModel runs before its LM head (see ../checkpoint/emd.ts for when they apply). The EMD head graph
// (./head-graph.ts) runs them before the masked-LM head; the passes graph here gives what a view shows of them.
import type { Checkpoint } from '../checkpoint';
import { requireWeight } from '../checkpoint';
import { EMD_POSITION_TABLE } from '../checkpoint/emd';
import type { TermName } from '../types';
import type { TermEdit } from './attention-builder';
import { EncoderBuilder, FORWARD_HEAD_GROUP } from './deberta-graph';
import { LayerInput, TailInput } from './deberta-io';
import { GraphBuilder } from './graph-builder';
import { OnnxType } from './onnx-proto';

export const EMD_PASSES_GRAPH_VERSION = 'deberta-lens-emd-passes-1';
export const EMD_EDIT_GRAPH_VERSION = 'deberta-lens-emd-edit-1';

/** Outputs of the passes graph: the query's parts `[n, D]`, and per pass k ∈ {0, 1} its output and attention. */
export const EmdOutput = {
  /** H, the state entering the last layer: the passes' keys and values. */
  kvHidden: 'emd_kv_hidden',
  /** The absolute position rows added to H (the position part of the first pass's query). */
  position: 'emd_position',
  /** I = H + position: the first pass's query. */
  query: 'emd_query',
  /** Pass k's output `[n, D]` (the second pass's query is the first's output; the LM head reads the second's). */
  hidden: (k: number) => `emd${k}_hidden`,
  /** Pass k's raw terms (unscaled, as explain gives them) and softmax, each `[heads, n, n]`. */
  attention: (k: number, kind: TermName | 'probs') => `emd${k}_${kind}`,
} as const;

/**
 * The Enhanced Mask Decoder as microsoft/DeBERTa's MaskedLanguageModel computes it (position_biased_input false):
 * H `[n, D]` is the hidden state entering the last layer; the query I = H + the first n rows of the absolute position
 * table (raw rows: no LayerNorm, no projection); the last layer runs with keys and values from H and the query I,
 * then again with the first pass's output as the query (the residuals are the query's). Returns the position rows,
 * I and both passes; with `named`, every head in one group and the attention outputs named (EmdOutput), else
 * attention in groups of `headGroup` heads as the forward graph computes it.
 */
export function emdPasses(
  g: GraphBuilder,
  ck: Checkpoint,
  H: string,
  named = false,
  headGroup = FORWARD_HEAD_GROUP,
  /** Per pass, how its raw terms are edited before the softmax (the intervention graph). */
  edits?: readonly [((group: number) => TermEdit) | undefined, ((group: number) => TermEdit) | undefined],
) {
  const s = ck.spec;
  const D = s.hiddenSize;
  const enc = new EncoderBuilder(g, ck, named ? s.numHeads : headGroup);
  const rel = enc.att.flags.relative ? g.input(LayerInput.rel, OnnxType.FLOAT, ['u', D]) : undefined;
  const rows = ck.weights.get(EMD_POSITION_TABLE)?.shape[0] ?? 0; // emdPlan checked the table before any graph
  const table = g.weight(requireWeight(ck, EMD_POSITION_TABLE, [rows, D]));
  const zero = g.constInt64([0]);
  const n = g.node('Shape', [H], { start: 0, end: 1 });
  const position = g.node('Slice', [table, zero, n, zero]);
  const query = g.node('Add', [H, position]);
  const last = s.numLayers - 1;
  const names = (k: number) => (named ? (kind: TermName | 'probs') => EmdOutput.attention(k, kind) : undefined);
  const first = enc.layer(last, H, H, rel, edits?.[0], query, names(0));
  const second = enc.layer(last, H, H, rel, edits?.[1], first, names(1));
  return { position, query, passes: [first, second] as const, flags: enc.att.flags };
}

/** Inputs `hidden` (H) and, with relative attention, `rel` and the pick and skew inputs; outputs EmdOutput. */
export function buildEmdPassesGraph(ck: Checkpoint): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    H = s.numHeads;
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  const emd = emdPasses(g, ck, hidden, true);
  g.output(hidden, EmdOutput.kvHidden, OnnxType.FLOAT, ['n', D]);
  g.output(emd.position, EmdOutput.position, OnnxType.FLOAT, ['n', D]);
  g.output(emd.query, EmdOutput.query, OnnxType.FLOAT, ['n', D]);
  const kinds = emdAttentionKinds(emd.flags);
  emd.passes.forEach((out, k) => {
    g.output(out, EmdOutput.hidden(k), OnnxType.FLOAT, ['n', D]);
    for (const kind of kinds) g.output(EmdOutput.attention(k, kind), EmdOutput.attention(k, kind), OnnxType.FLOAT, [H, 'n', 'n']);
  });
  return g;
}

/** The attention outputs of a pass for a model's terms. */
export function emdAttentionKinds(flags: { c2p: boolean; p2c: boolean }): (TermName | 'probs')[] {
  return ['c2c', ...(flags.c2p ? ['c2p' as const] : []), ...(flags.p2c ? ['p2c' as const] : []), 'probs'];
}

/**
 * The EMD's passes with attention terms removed (an intervention inside the decoder): inputs as the passes graph's
 * plus, per term, `keep_<term>` `[2, heads]` multipliers of each pass's raw term (1 keeps it) and `ablate_mean` `[1]`
 * (0: a removed term is 0; 1: its mean over key positions), as the encoder's tail graph takes them; output the second
 * pass's state (what the LM head reads). Every head in one group: the edit is per head.
 */
export function buildEmdEditGraph(ck: Checkpoint): GraphBuilder {
  const s = ck.spec;
  const g = new GraphBuilder();
  const D = s.hiddenSize,
    H = s.numHeads;
  const hidden = g.input(LayerInput.hidden, OnnxType.FLOAT, ['n', D]);
  const relative = s.relativeAttention && s.posAttType.length > 0;
  const kinds = (['c2c', 'c2p', 'p2c'] as const).filter((t) => t === 'c2c' || (relative && s.posAttType.includes(t)));
  const keepIn = new Map(kinds.map((t) => [t, g.input(TailInput.keep(t), OnnxType.FLOAT, [2, H])]));
  const mean = g.input(TailInput.mean, OnnxType.FLOAT, [1]);
  const one = g.constFloat([1], []),
    lastAxis = g.constInt64([-1]),
    perHead = g.constInt64([-1, 1, 1]);
  const editOf = (pass: number) => {
    const weights = new Map<TermName, { keep: string; toMean: string }>();
    for (const [t, input] of keepIn) {
      const keep = g.node('Reshape', [g.node('Gather', [input, g.constInt64([pass])], { axis: 0 }), perHead]);
      weights.set(t, { keep, toMean: g.node('Mul', [g.node('Sub', [one, keep]), mean]) });
    }
    return (): TermEdit => (kind, term) => {
      const w = weights.get(kind);
      if (!w) return term;
      const rowMean = g.node('ReduceMean', [term, lastAxis], { keepdims: 1 });
      return g.node('Add', [g.node('Mul', [term, w.keep]), g.node('Mul', [rowMean, w.toMean])]);
    };
  };
  const emd = emdPasses(g, ck, hidden, false, H, [editOf(0), editOf(1)]);
  g.output(emd.passes[1], EmdOutput.hidden(1), OnnxType.FLOAT, ['n', D]);
  return g;
}
