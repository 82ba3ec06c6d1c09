// The Diff tab: this explain minus the previous one (or the intervened run minus the plain one) for the current
// layer, head and term, over the tokens both texts share, with a warning when they are not the same passage.
import { formatValue } from '../../../src/shared/format';
import { fromBuffer } from '../../../src/shared/protocol/lens';
import { pieceLabel } from '../../../src/shared/token-layout';
import { makeLut } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { diffCaption, diffMismatch, diffOverCurrent, DIFF_EMPTY, editedLine } from './diff-model';
import { colourBar, figure, jointLimits, withAxes, limitsText, matrixCanvas, onCell, readout, sidePx, tokenText } from './kit';
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
  const matched = fromBuffer(r.data, P * P);
  const n = r.nB;
  // Every current token keeps its row and column: the ones an edit inserted are grey (nothing to subtract).
  const { values, inserted } = diffOverCurrent(matched, r.pairs, n);
  const isNew = new Set(inserted);
  const removed = (r.removed ?? []).map((t) => pieceLabel(t.text));
  const edited = editedLine(
    inserted.map((k) => tokenText(init.tokens, k)),
    removed,
  );
  if (edited) body.append(el('p', { id: 'diff-edited', class: 'caption' }, [edited]));
  const range = jointLimits([matched], true);
  const lut = makeLut(state.colorScale, true, themeKind());
  const c = matrixCanvas(
    'diff-matrix',
    values,
    n,
    n,
    range,
    lut,
    sidePx(n, 1),
    `Current minus previous ${term}, ${n} tokens (${inserted.length} new, no previous value): rows queries, columns keys`,
  );
  greyOut(c, n, inserted);
  const previousOf = new Map(r.pairs.map(([a, b]) => [b, a]));
  const labels = el(
    'ol',
    { id: 'diff-labels', class: 'diff-labels meta', start: '0', 'aria-label': 'Current tokens (rows and columns, in order)' },
    init.tokens.map((_, k) => {
      const a = previousOf.get(k);
      return el(
        'li',
        {
          'data-k': String(k),
          ...(isNew.has(k) ? { class: 'diff-new', title: 'new in this text' } : { title: `previous #${a}, current #${k}` }),
        },
        [tokenText(init.tokens, k)],
      );
    }),
  );
  body.append(
    // The bar above the map: the token list beside it runs long.
    colourBar(range, lut, `current − previous ${term}`),
    el('div', { class: 'analysis-row' }, [
      figure(withAxes(c, n, init.text, init.tokens), `current − previous (${limitsText(range)})`),
      labels,
    ]),
  );
  const name = (k: number) => `“${tokenText(init.tokens, k)}” (${isNew.has(k) ? `#${k}, new` : `#${previousOf.get(k)} → #${k}`})`;
  onCell(c, n, (i, j) => {
    const v = values[i * n + j] ?? NaN;
    const diff = Number.isNaN(v) ? 'no previous value: the edit inserted this token' : `current − previous ${term} = ${formatValue(v)}`;
    readout(`query ${name(i)} → key ${name(j)}: ${diff}`);
  });
  $picture.set({ canvas: c, values, rows: n, cols: n, range, lut, title: `Current − previous ${term}, layer ${layer} head ${head}` });
}

/** Paints the rows and columns of inserted tokens a flat grey (the canvas has one pixel per cell). */
function greyOut(c: HTMLCanvasElement, n: number, inserted: readonly number[]): void {
  const g = c.getContext('2d');
  if (!g || !inserted.length) return;
  g.fillStyle = themeKind() === 'dark' ? 'rgb(96, 96, 96)' : 'rgb(170, 170, 170)';
  for (const k of inserted) {
    g.fillRect(0, k, n, 1);
    g.fillRect(k, 0, 1, n);
  }
}
