// The Compare Models panel's host side without `vscode`: what the view is told about the two results (tokens,
// terms, the alignment) and the one request it makes (one head's matrix of one term on one side). The unit
// tests run it against real results of the bundled model and the BERT fixture.
import type { ExplainResult } from '../../engine';
import type { Decision } from '../../shared/decision';
import { kindsFor, type CompareInit, type CompareKind, type CompareSide, type CompareSliceRequest } from '../../shared/protocol/compare';
import type { ColorScaleName } from '../../shared/protocol/lens';
import { alignTokens, sameTokenization } from '../../shared/token-alignment';
import { protocolTokens } from '../common/result-shape';

export interface SideResult {
  result: ExplainResult;
  /** Explain time in ms (shown beside the model name). */
  ms: number;
  /** A fine-tuned checkpoint's decision on the text. */
  decision?: Decision;
}

export function compareSide({ result, ms, decision }: SideResult): CompareSide {
  const architecture = result.model.architecture ?? 'deberta';
  return {
    name: result.model.name,
    path: result.model.path,
    type: result.model.type,
    architecture,
    layers: result.layers,
    heads: result.heads,
    terms: architecture === 'bert' ? [] : result.terms,
    decomposition: result.hasDecomposition,
    tokens: protocolTokens(result),
    ms,
    ...(decision ? { decision } : {}),
  };
}

/** Two models' names for messages; the same name on both sides gets A/B added. */
export function sideNames(a: CompareSide, b: CompareSide): { a: string; b: string } {
  return a.name === b.name ? { a: `${a.name} (A)`, b: `${b.name} (B)` } : { a: a.name, b: b.name };
}

export function compareInit(pairId: number, text: string, a: SideResult, b: SideResult, colorScale: ColorScaleName): CompareInit {
  const sa = compareSide(a);
  const sb = compareSide(b);
  return {
    pairId,
    text,
    a: sa,
    b: sb,
    alignment: alignTokens(text, sa.tokens, sb.tokens, sideNames(sa, sb)),
    sameTokens: sameTokenization(sa.tokens, sb.tokens),
    colorScale,
  };
}

/**
 * One head's `[n, n]` matrix of one term. BERT's c2c/c2p/p2c/p2p/rest are layer 0's split of the score (score
 * units); every other kind is the result's own matrix. Rejects with a one-line Error for what the side lacks.
 */
export async function answerCompareSlice(
  result: ExplainResult,
  body: CompareSliceRequest,
  signal?: AbortSignal,
): Promise<{ n: number; data: Float32Array }> {
  const { layer, head, kind } = body;
  if (!result.layers.includes(layer)) throw new Error(`layer ${layer} is not in this result (it has ${result.layers.join(', ')})`);
  if (head < 0 || head >= result.heads) throw new Error(`head ${head} is out of range (0–${result.heads - 1})`);
  const side = compareSide({ result, ms: 0 });
  if (!kindsFor(side, layer).includes(kind)) {
    if (side.architecture === 'bert') throw new Error(`BERT's ${kind} is layer 0's split of the score: pick layer 0 to see it`);
    throw new Error(`${result.model.name} has no ${kind} term (it has ${[...side.terms, 'scores', 'probs'].join(', ')})`);
  }
  const n = result.n;
  const nn = n * n;
  if (side.architecture === 'bert' && isSplitKind(kind)) {
    const split = await result.layer0Decomposition(signal);
    return { n, data: split[kind].subarray(head * nn, (head + 1) * nn) };
  }
  await result.load(layer, signal);
  return { n, data: result.slice(layer, head, kind as 'c2c' | 'c2p' | 'p2c' | 'scores' | 'probs') };
}

function isSplitKind(kind: CompareKind): kind is 'c2c' | 'c2p' | 'p2c' | 'p2p' | 'rest' {
  return kind !== 'scores' && kind !== 'probs';
}
