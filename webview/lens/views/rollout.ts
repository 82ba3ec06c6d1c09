// The Rollout tab: how much of each key token's input reaches each query token's output through all layers, for
// the real attention and, beside it, with some score terms dropped (DeBERTa only), on one colour scale.
import { formatValue } from '../../../src/shared/format';
import { fromBuffer, isBertModel, type AblationPresetName } from '../../../src/shared/protocol/lens';
import { makeLut } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { PRESET_LABELS } from './ablation-model';
import { colourBar, figure, jointLimits, withAxes, limitsText, matrixCanvas, onCell, readout, sidePx, tokenText } from './kit';
import { presetPicker } from './preset-picker';
import type { ViewContext } from './view-context';

export async function renderRollout(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const tok = (k: number) => tokenText(init.tokens, k);
  // BERT's score has no terms to leave out: its rollout is the real attention's only.
  const bert = isBertModel(init.model);
  const picker = presetPicker('rollout-preset', true);
  const preset = bert ? 'all' : (picker.value as AblationPresetName);
  if (!bert) body.append(el('div', { class: 'analysis-controls' }, [el('label', {}, ['Terms ', picker])]));
  const [real, abl] = await Promise.all([
    ctx.request({ type: 'rollout', preset: 'all' }),
    preset === 'all' ? Promise.resolve(undefined) : ctx.request({ type: 'rollout', preset }),
  ]);
  if (!ctx.isCurrent()) return;
  const n = real.n;
  const rv = fromBuffer(real.data, n * n);
  const av = abl ? fromBuffer(abl.data, n * n) : undefined;
  const lut = makeLut(state.colorScale, false, themeKind());
  const range = jointLimits(av ? [rv, av] : [rv], false);
  const px = sidePx(n, av ? 2 : 1);
  const cReal = matrixCanvas('rollout-real', rv, n, n, range, lut, px, 'Rollout of the real attention');
  const figs = [
    figure(
      withAxes(cReal, n, init.text, init.tokens),
      `real, layers ${real.layers[0]}–${real.layers[real.layers.length - 1]} (${limitsText(range)})`,
    ),
  ];
  let shownCanvas: [HTMLCanvasElement, Float32Array] = [cReal, rv];
  const canvases = [cReal];
  if (av) {
    const cAbl = matrixCanvas('rollout-ablated', av, n, n, range, lut, px, `Rollout keeping ${PRESET_LABELS[preset]}`);
    figs.push(figure(withAxes(cAbl, n, init.text, init.tokens), PRESET_LABELS[preset]));
    canvases.push(cAbl);
    shownCanvas = [cAbl, av];
  }
  body.append(el('div', { class: 'analysis-row' }, figs), colourBar(range, lut, 'rollout, one range over the maps'));
  for (const c of canvases) {
    onCell(c, n, (i, j) => {
      const k = i * n + j;
      readout(
        `query #${i} “${tok(i)}” ← key #${j} “${tok(j)}”: rollout ${formatValue(rv[k] ?? NaN)}` +
          (av ? `, ${preset} ${formatValue(av[k] ?? NaN)}` : ''),
      );
    });
  }
  const [canvas, values] = shownCanvas;
  $picture.set({ canvas, values, rows: n, cols: n, range, lut, title: `Attention rollout (${preset})` });
}
