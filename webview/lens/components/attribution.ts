// "Which words made it say that?" in the panel: the decision card's row for the occlusion (progress and Cancel while
// it runs; then the method, the tokens — or words, asked while the strip merges them — that pushed the decision
// most each way, Clear) and the strip's chips shaded
// by each token's score on the signed scale — red where taking the token out lowers the followed logit, blue where it
// raises it. Hover lighting paints over the shade and gives it back when it moves on.
import { type DecisionTarget } from '../../../src/shared/decision';
import { attributionLine, type OcclusionMethodName, signedStrengths } from '../../../src/shared/occlusion';
import type { WebviewToHost } from '../../../src/shared/protocol/lens';
import { chipColours } from '../../common/chip-colours';
import { makeLut } from '../../common/colors';
import { el, themeKind } from '../../common/dom';
import { $attribution, $init, $merged, $viewState } from '../state/store';
import { tokenName } from './predictions-model';
import { pieceLabel } from '../../../src/shared/token-layout';

/** Asks the host to attribute the decision `target` (named `asked` on the card) to the tokens — to the words, each
 *  taken out whole, while the strip merges pieces into words. */
export function askWhichWords(post: (m: WebviewToHost) => void, target: DecisionTarget, asked: string): void {
  const resultId = $init.get()?.resultId;
  if (resultId === undefined) return;
  const merge = $viewState.get()?.merge ?? undefined;
  $attribution.set({ attribution: { state: 'running', done: 0, total: 0 }, asked, method: $attribution.get()?.method ?? 'mask' });
  post({ type: 'occlude', resultId, target, ...(merge ? { merge } : {}) });
}

/** The card's attribution row for the state on screen (empty when none was asked for). */
export function attributionRow(post: (m: WebviewToHost) => void): HTMLElement {
  const st = $attribution.get();
  const resultId = $init.get()?.resultId;
  const row = el('div', { id: 'attribution', class: 'attribution' });
  if (!st || resultId === undefined) return row;
  const a = st.attribution;
  row.dataset.state = a.state;
  if (a.state === 'running') {
    const cancel = el('button', { type: 'button', class: 'decision-why' }, ['Cancel']);
    cancel.addEventListener('click', () => {
      post({ type: 'cancelOcclusion', resultId });
      $attribution.set(undefined);
    });
    row.append(
      el('span', { class: 'meta', role: 'status' }, [
        `Which words made it say ${st.asked}? taking each ${$viewState.get()?.merge ? 'word' : 'token'} out… ${a.total ? `${a.done}/${a.total}` : ''}`,
      ]),
      cancel,
    );
    return row;
  }
  const clear = el('button', { type: 'button', class: 'decision-why', title: 'Remove the shading from the strip and the editor' }, [
    'Clear',
  ]);
  clear.addEventListener('click', () => {
    post({ type: 'cancelOcclusion', resultId });
    $attribution.set(undefined);
  });
  if (a.state === 'error') {
    row.append(el('span', { class: 'error', role: 'alert' }, [`Which words: ${a.message}`]), clear);
    return row;
  }
  const methods = (['mask', 'remove'] as const).filter((m) => a[m]);
  const pick = el('select', { id: 'attribution-method', 'aria-label': 'How a token is taken out' }, [
    ...methods.map((m) => el('option', { value: m }, [m === 'mask' ? 'masked' : 'removed'])),
  ]);
  pick.value = methods.includes(st.method) ? st.method : (methods[0] ?? 'mask');
  pick.addEventListener('change', () => $attribution.set({ ...st, method: pick.value as OcclusionMethodName }));
  const scores = a[pick.value as OcclusionMethodName] ?? [];
  const tokens = $init.get()?.tokens ?? [];
  const groups = a.words?.groups;
  // A word is named by its pieces joined, as the strip's merged chip shows it.
  const name = (i: number) => {
    const g = groups?.find((x) => x[0] === i);
    return g && g.length > 1 ? `#${i} “${g.map((p) => pieceLabel(tokens[p]?.text ?? '')).join('')}”` : tokenName(tokens, i);
  };
  row.append(
    el('span', { class: 'attribution-title' }, [`Which words: ${a.followed}, each ${groups ? 'word' : 'token'} `]),
    pick,
    el('span', { id: 'attribution-line', class: 'attribution-line', title: `before ${a.before.toFixed(4)}; ${Math.round(a.ms)} ms` }, [
      attributionLine(scores, name, 3, groups),
    ]),
    clear,
  );
  return row;
}

/** Shades the strip's chips by the attribution on screen (clears the shade without one). */
export function shadeStrip(box: HTMLElement | null): void {
  if (!box) return;
  for (const c of box.querySelectorAll<HTMLElement>('.tok[data-attr]')) {
    delete c.dataset.attr;
    delete c.dataset.attrBg;
    delete c.dataset.attrFg;
    c.style.backgroundColor = '';
    c.style.color = '';
  }
  const st = $attribution.get();
  const a = st?.attribution;
  if (!st || a?.state !== 'ready') return;
  const scores = a[st.method] ?? a.mask ?? a.remove;
  if (!scores) return;
  const strengths = signedStrengths(scores);
  const lut = makeLut('diverging', true, themeKind());
  const groups = $merged.get();
  for (const c of box.querySelectorAll<HTMLElement>('.tok')) {
    const row = Number(c.dataset.i);
    // A merged word: its own score when words were taken out whole (every piece holds it), else the sum of its
    // pieces' scores, on the same scale.
    const all = groups ? (groups[row]?.pieces ?? []) : [row];
    const pieces = a.words ? all.slice(0, 1) : all;
    const x = pieces.reduce((sum, p) => sum + (strengths[p] ?? 0), 0);
    if (x === 0) continue;
    const { background, color } = chipColours(Math.min(1, Math.abs(x)), x > 0 ? 1 : -1, lut);
    c.dataset.attr = String(pieces.reduce((sum, p) => sum + (scores[p] ?? 0), 0));
    c.dataset.attrBg = background;
    c.dataset.attrFg = color;
    c.style.backgroundColor = background;
    c.style.color = color;
  }
}
