// The Softmax ablation tab: this head's real probabilities, the probabilities with some score terms dropped (same
// scale, same softmax) and their difference, with the per-query KL and total variation.
import { formatValue } from '../../../src/shared/format';
import { fromBuffer, type AblationPresetName } from '../../../src/shared/protocol/lens';
import { makeLut } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { ablationRowText, meanMax, PRESET_LABELS } from './ablation-model';
import { colourBar, figure, jointLimits, withAxes, limitsText, matrixCanvas, onCell, readout, sidePx, tokenText } from './kit';
import { presetPicker } from './preset-picker';
import type { ViewContext } from './view-context';

export async function renderAblation(body: HTMLElement, ctx: ViewContext): Promise<void> {
  const shown = onScreen();
  if (!shown) return;
  const { init, state } = shown;
  const { layer, head } = state;
  const tok = (k: number) => tokenText(init.tokens, k);
  const picker = presetPicker('ablation-preset', false);
  const preset = picker.value as AblationPresetName;
  body.append(
    el('div', { class: 'analysis-controls' }, [
      el('label', {}, ['Keep ', picker]),
      el('span', { class: 'meta' }, [` layer ${layer}, head ${head}`]),
    ]),
  );
  const r = await ctx.request({ type: 'ablation', layer, head, preset });
  if (!ctx.isCurrent()) return;
  const n = r.n;
  const real = fromBuffer(r.real, n * n);
  const abl = fromBuffer(r.probs, n * n);
  const diff = fromBuffer(r.diff, n * n);
  const kl = fromBuffer(r.kl, n);
  const tv = fromBuffer(r.tv, n);
  const scale = state.colorScale;
  const shared = jointLimits([real, abl], false);
  const probLut = makeLut(scale, false, themeKind());
  const diffRange = jointLimits([diff], true);
  const diffLut = makeLut(scale, true, themeKind());
  const px = sidePx(n, 3);
  const cReal = matrixCanvas('ablation-real', real, n, n, shared, probLut, px, 'Real probabilities');
  const cAbl = matrixCanvas('ablation-probs', abl, n, n, shared, probLut, px, `Ablated probabilities (${PRESET_LABELS[preset]})`);
  const cDiff = matrixCanvas('ablation-diff', diff, n, n, diffRange, diffLut, px, 'Ablated minus real');
  body.append(
    el('div', { class: 'analysis-row' }, [
      figure(withAxes(cReal, n, init.text, init.tokens), `real probs (${limitsText(shared)})`),
      figure(withAxes(cAbl, n, init.text, init.tokens), `keeping ${r.kept.join(' + ')}`),
      figure(withAxes(cDiff, n, init.text, init.tokens), `ablated − real (${limitsText(diffRange)})`),
    ]),
    el('div', { class: 'analysis-legends' }, [
      colourBar(shared, probLut, 'real and ablated probs'),
      colourBar(diffRange, diffLut, 'ablated − real'),
    ]),
  );
  const klS = meanMax(kl);
  const tvS = meanMax(tv);
  body.append(
    el('p', { id: 'ablation-summary', class: 'meta' }, [
      `Mean KL(real ‖ ablated) ${formatValue(klS.mean)} nats (max ${formatValue(klS.max)} at “${tok(klS.argmax)}”); mean total variation ${formatValue(tvS.mean)} (max ${formatValue(tvS.max)}).`,
    ]),
  );
  const show = (i: number, j: number) => {
    const k = i * n + j;
    readout(
      `${ablationRowText(i, tok(i), kl[i] ?? NaN, tv[i] ?? NaN)}. Key #${j} “${tok(j)}”: real ${formatValue(real[k] ?? NaN)}, ablated ${formatValue(abl[k] ?? NaN)}, difference ${formatValue(diff[k] ?? NaN)}.`,
    );
  };
  for (const c of [cReal, cAbl, cDiff]) onCell(c, n, show);
  $picture.set({
    canvas: cDiff,
    values: diff,
    rows: n,
    cols: n,
    range: diffRange,
    lut: diffLut,
    title: `Ablation ${preset} − real, layer ${layer} head ${head}`,
  });
}
