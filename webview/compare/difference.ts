// What the Difference view of the Compare Models panel shows: A − B cell by cell where both sides have the
// same tokens, A − B over the aligned groups (each side averaged over its tokens in a group) where they do not,
// or one line saying why there is nothing to subtract. Pure: no DOM, tested under node.
import type { CompareKind } from '../../src/shared/protocol/compare';
import type { ProtocolToken } from '../../src/shared/protocol/lens';
import { poolToGroups, subtract, type Alignment } from '../../src/shared/token-alignment';

export interface DiffSide {
  values: Float32Array;
  n: number;
  kind: CompareKind;
  layer: number;
  head: number;
}

export type Difference =
  { ok: true; values: Float32Array; n: number; labels: string[]; pooled: boolean; caption: string } | { ok: false; message: string };

export function difference(
  a: DiffSide | undefined,
  b: DiffSide | undefined,
  ctx: { sameTokens: boolean; alignment: Alignment; tokensA: readonly ProtocolToken[] },
): Difference {
  if (!a || !b) return { ok: false, message: 'Waiting for both sides’ matrices…' };
  if (a.kind !== b.kind) {
    return { ok: false, message: `A shows ${a.kind} and B shows ${b.kind}: pick the same term on both sides to see A − B.` };
  }
  const what = `A (layer ${a.layer}, head ${a.head}) − B (layer ${b.layer}, head ${b.head}), ${a.kind}`;
  if (ctx.sameTokens && a.n === b.n) {
    const values = subtract(a.values, b.values);
    const same = values.every((v) => v === 0) ? ' A and B are identical here: every cell is 0.' : '';
    return {
      ok: true,
      values,
      n: a.n,
      labels: ctx.tokensA.map((t) => t.text),
      pooled: false,
      caption: `${what}, cell by cell (both sides have the same tokens).${same}`,
    };
  }
  if (!ctx.alignment.ok)
    return {
      ok: false,
      message: `No difference: the tokens differ and ${ctx.alignment.reason.replace(/^Cannot/, 'cannot').replace(/\.$/, '')}.`,
    };
  const { groups } = ctx.alignment;
  const values = subtract(poolToGroups(a.values, a.n, groups, 'a'), poolToGroups(b.values, b.n, groups, 'b'));
  const oneSided = groups.filter((g) => !g.a.length || !g.b.length).length;
  return {
    ok: true,
    values,
    n: groups.length,
    labels: groups.map((g) => g.text),
    pooled: true,
    caption:
      `${what}, over ${groups.length} aligned spans: the tokenizers split the text differently, so each cell is the mean over the span's tokens on each side, then A − B.` +
      (oneSided ? ` ${oneSided} span${oneSided === 1 ? '' : 's'} only one side covers show${oneSided === 1 ? 's' : ''} no value.` : ''),
  };
}
