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

export function protocolTokens(result: ExplainResult): ProtocolToken[] {
  return result.tokens.map((t, i) => ({ i, text: t.text, start: t.start, end: t.end, special: t.special }));
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
