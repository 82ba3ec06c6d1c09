// The Diff tab: this explain minus the previous one (or the intervened run minus the plain one) for the current
// layer, head and term, over the tokens both texts share, with a warning when they are not the same passage.
import { formatValue } from '../../../src/shared/format';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { makeLut } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { diffCaption, diffMismatch, DIFF_EMPTY } from './diff-model';
import { figure, jointLimits, limitsText, matrixCanvas, onCell, readout, sidePx } from './kit';
import type { ViewContext } from './view-context';

export async function renderDiff(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const { layer, head, term } = state;
  const r = await ctx.request({ type: 'diff', layer, head, kind: term });
  if (!ctx.isCurrent()) return;
  if (!r.hasPrevious) {
    body.append(el('p', { id: 'diff-empty', class: 'caption' }, [DIFF_EMPTY]));
    return;
  }
  const P = r.pairs.length;
  body.append(
    el('p', { id: 'diff-summary', class: 'caption' }, [
      diffCaption(term, layer, head, P, r.nB, r.nA, init.run ? 'intervened − plain run' : undefined),
    ]),
  );
  const mismatch = diffMismatch(P, r.nB, r.nA);
  if (mismatch) body.append(el('p', { id: 'diff-mismatch', class: 'caption warning', role: 'alert' }, [mismatch]));
  if (P === 0) {
    body.append(el('p', { class: 'meta' }, ['No token of this text matches the previous one; nothing to compare.']));
    return;
  }
  const values = fromBuffer(r.data, P * P);
  const range = jointLimits([values], true);
  const lut = makeLut(state.colorScale, true, themeKind());
  const c = matrixCanvas(
    'diff-matrix',
    values,
    P,
    P,
    range,
    lut,
    sidePx(P, 1.6),
    `Current minus previous ${term}, ${P} matched tokens: rows queries, columns keys`,
  );
  const labels = el(
    'ol',
    { id: 'diff-labels', class: 'diff-labels meta', start: '0', 'aria-label': 'Matched tokens (rows and columns, in order)' },
    r.labels.map((t, p) => {
      const [a, b] = r.pairs[p] ?? [];
      return el('li', { 'data-p': String(p), title: `previous #${a}, current #${b}` }, [pieceLabel(t)]);
    }),
  );
  body.append(el('div', { class: 'analysis-row' }, [figure(c, `current − previous (${limitsText(range)})`), labels]));
  onCell(c, P, (p, q) => {
    const [ap, bp] = r.pairs[p] ?? [];
    const [aq, bq] = r.pairs[q] ?? [];
    readout(
      `query “${pieceLabel(r.labels[p] ?? '')}” (#${ap} → #${bp}) → key “${pieceLabel(r.labels[q] ?? '')}” (#${aq} → #${bq}): current − previous ${term} = ${formatValue(values[p * P + q] ?? NaN)}`,
    );
  });
  $picture.set({ canvas: c, values, rows: P, cols: P, range, lut, title: `Current − previous ${term}, layer ${layer} head ${head}` });
}
