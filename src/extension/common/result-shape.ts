// What the views need to know about a result besides its matrices: kinds, tokens, position geometry, and the
// one-line checks of a request against the result.
import type { ExplainResult, MatrixKind } from '../../engine';
import type { PositionSpec } from '../../analysis';
import type { ProtocolToken } from '../../shared/protocol/lens';
import { kindsOf } from '../../shared/kinds';

/** Matrix kinds the result can hand out, in display order. */
export function availableKinds(result: ExplainResult): MatrixKind[] {
  return kindsOf((k) => result.has(k));
}

/**
 * The result's tokens as the views get them. `shown`: the text the view lays them out in; a sentence pair typed as
 * "A [SEP] B" there gets its separator where it was typed, so the strip shows one [SEP], not the token and the text.
 */
export function protocolTokens(result: ExplainResult, shown?: string): ProtocolToken[] {
  const tokens = result.tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
  const a = result.text?.length;
  if (shown === undefined || result.pair === undefined || a === undefined || !result.pairOffset) return tokens;
  const typed = shown.indexOf('[SEP]', a);
  const sep = tokens.find((t) => t.special && t.start === a && t.i > 0);
  if (sep && typed >= 0 && typed + 5 <= result.pairOffset) [sep.start, sep.end] = [typed, typed + 5];
  return tokens;
}

/** The text the result's token offsets point into: a pair's second text at its offset (what lies between read as
 *  spaces), so word boundaries fall between the two texts. */
export function offsetText(result: ExplainResult): string | undefined {
  if (result.pair === undefined || result.text === undefined) return result.text;
  const at = Math.max(result.pairOffset ?? 0, result.text.length + 1);
  return result.text.padEnd(at, ' ') + result.pair;
}

/** The position settings of a model summary, as the analysis functions take them. */
export function positionSpecOf(summary: { position_buckets: number; max_relative_positions: number }): PositionSpec {
  const positionBuckets = summary.position_buckets > 0 ? summary.position_buckets : 0;
  return {
    positionBuckets,
    maxRelativePositions: summary.max_relative_positions,
    attSpan: positionBuckets > 0 ? positionBuckets : summary.max_relative_positions,
  };
}

/** Throws a one-line Error for a layer, head or kind the result does not have. */
export function check(result: ExplainResult, layer: number, head: number | undefined, kind: MatrixKind): void {
  if (!result.layers.includes(layer)) throw new Error(`layer ${layer} is not in this result`);
  if (head !== undefined && (head < 0 || head >= result.heads)) throw new Error(`head ${head} is out of range`);
  if (!result.has(kind)) throw new Error(`this model has no ${kind} term`);
}
