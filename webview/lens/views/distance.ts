// The Distance tab: this head's c2p and p2c (c2c for reference; BERT's layer 0 also p2p) averaged over every
// (query, key) pair at the same relative distance δ, the peaks in a sentence, and below it the profile of the
// hovered query token alone, which follows the hover in the lens store.
import { formatValue } from '../../../src/shared/format';
import { fromBuffer, type DistanceResponse } from '../../../src/shared/protocol/lens';
import { makeLut } from '../../common/colors';
import { valueRange } from '../../../src/shared/value-range';
import { el } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { $hover, $init, $viewState } from '../state/store';
import { drawProfile, type ProfileLine } from './distance-chart';
import { peakSentence, PROFILE_ORDER, SERIES_COLORS } from './distance-model';
import { readout, tokenText } from './kit';
import { bertNoSplitText } from './view-captions';
import type { ViewContext } from './view-context';

const ROW_HINT = 'Hover a token in the strip to see its own row profile.';

export async function renderDistance(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const { layer, head } = state;
  const all = await ctx.request({ type: 'distance', layer, head, query: null });
  if (!ctx.isCurrent()) return;
  const n = all.n;
  const sentence = el('p', { id: 'distance-peaks', class: 'caption' });
  if (all.split === 'bert-none') {
    // BERT after layer 0: nothing to profile but the attention itself, which the heatmap shows.
    sentence.textContent =
      bertNoSplitText(layer, 'distance') +
      (all.series.probs ? ` Head ${head}’s attention ${peakSentence(all.series.probs.peakDelta)}.` : '');
    // The caption describes layer 0's split: here the sentence is all there is to say.
    document.getElementById('analysis-caption')?.remove();
    body.append(sentence);
    document.getElementById('analysis-readout')?.setAttribute('hidden', '');
    return;
  }
  const w = Math.max(320, Math.min(document.body.clientWidth - 64, 900));
  const h = 220;
  const series = (r: DistanceResponse): ProfileLine[] =>
    PROFILE_ORDER.flatMap((k) => {
      const x = r.series[k];
      return x ? [{ kind: k, mean: fromBuffer(x.mean, 2 * n - 1), std: fromBuffer(x.std, 2 * n - 1), peak: x.peakDelta }] : [];
    });
  const s = series(all);
  const named = s.map((x) => x.kind).join(', ');
  const chart = el('canvas', {
    id: 'distance-chart',
    class: 'analysis-canvas',
    role: 'img',
    tabindex: '0',
    'aria-label': `${named} by relative distance, layer ${layer} head ${head}`,
  });
  const rowChart = el('canvas', {
    id: 'distance-row-chart',
    class: 'analysis-canvas',
    role: 'img',
    'aria-label': 'Profile of the hovered query token',
  });
  const rowSentence = el('p', { id: 'distance-row-peaks', class: 'meta' }, [ROW_HINT]);
  // BERT's four lines with a band each would bury one another: means only there (std in the readout), and the
  // names in a legend above the chart rather than over its lines.
  const bertSplit = all.split === 'bert-layer0';
  const legend = el(
    'div',
    { id: 'distance-legend', class: 'legend' },
    s.map((x) => {
      const sw = el('span', { class: 'swatch' });
      sw.style.backgroundColor = SERIES_COLORS[x.kind];
      return el('span', { class: 'legend-item' }, [sw, x.kind === 'c2c' ? 'c2c (dashed, reference)' : x.kind]);
    }),
  );
  // Said under the chart, not over its lines: the far ends, averaged over few pairs, may run off the y axis.
  const clipNote = el('p', { id: 'distance-clip', class: 'meta' });
  body.append(sentence, ...(bertSplit ? [legend] : []), chart, clipNote, rowSentence, rowChart);
  const far = drawProfile(chart, w, h, n, s, !bertSplit, !bertSplit);
  clipNote.textContent =
    far === undefined
      ? ''
      : `The y axis fits |δ| ≤ ${far} (at least a quarter of the diagonal’s pairs); the means beyond, over few pairs, run off it.`;
  clipNote.hidden = far === undefined;
  // c2c is drawn for reference; the sentence is about what position does.
  const told = (xs: ProfileLine[]) => xs.filter((x) => x.kind !== 'c2c' || xs.length === 1);
  sentence.textContent = s.length
    ? `Layer ${layer}, head ${head}: ` +
      told(s)
        .map((x) => `${x.kind} ${peakSentence(x.peak)}`)
        .join('; ') +
      (all.series.probs ? `; attention ${peakSentence(all.series.probs.peakDelta)}.` : '.')
    : 'This model has no relative-position terms (c2p, p2c).';
  chart.addEventListener('mousemove', (e) => {
    const b = chart.getBoundingClientRect();
    const k = Math.floor(((e.clientX - b.left) / b.width) * (2 * n - 1));
    if (k < 0 || k >= 2 * n - 1) return;
    const d = k - (n - 1);
    readout(
      `δ = ${d} (key ${d > 0 ? `${d} to the left` : d < 0 ? `${-d} to the right` : 'is the query'}; ${n - Math.abs(d)} pairs): ` +
        s.map((x) => `${x.kind} mean ${formatValue(x.mean[k] ?? NaN)} ± ${formatValue(x.std[k] ?? NaN)}`).join(', '),
    );
  });
  const first = s.find((x) => x.kind !== 'c2c') ?? s[0];
  $picture.set({
    canvas: chart,
    values: Float32Array.from(first?.mean ?? []),
    rows: 1,
    cols: first ? 2 * n - 1 : 0,
    range: valueRange(
      Float32Array.from(first?.mean ?? [0]).map((v) => (Number.isFinite(v) ? v : 0)),
      true,
    ),
    lut: makeLut(state.colorScale, true),
    title: `${first?.kind ?? 'c2p'} mean by δ, layer ${layer} head ${head}`,
  });
  let seq = 0;
  const follow = async (i: number | null) => {
    const mine = ++seq;
    if (i === null) {
      drawProfile(rowChart, w, 140, n, [], false, !bertSplit);
      rowSentence.textContent = ROW_HINT;
      return;
    }
    const r = await ctx.request({ type: 'distance', layer, head, query: i });
    if (mine !== seq || !ctx.isCurrent()) return;
    const rs = series(r);
    drawProfile(rowChart, w, 140, n, rs, false, !bertSplit);
    rowSentence.textContent =
      `Query #${i} “${tokenText(init.tokens, i)}”: ` +
      told(rs)
        .map((x) => `${x.kind} ${peakSentence(x.peak)}`)
        .join('; ');
  };
  // The row chart follows the hovered (or pinned) query until a newer render takes over.
  const stop = $hover.listen(({ i }) => {
    if (!ctx.isCurrent()) return stop();
    if ($viewState.get() && $init.get()) void follow(i);
  });
  void follow(state.pinned);
}
