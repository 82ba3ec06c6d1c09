// The ablation preset picker of the Softmax ablation and Rollout tabs: the presets this model's terms allow, the
// reader's last choice, and a change stored in the lens state (which redraws the view).
import { ABLATION_PRESETS, type AblationPresetName } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';
import { update } from '../state/actions';
import { onScreen } from '../state/selectors';
import { PRESET_LABELS } from './ablation-model';

/** `withAll`: "all terms" (the real model) is a choice, as in the rollout; the ablation starts at content only. */
export function presetPicker(id: string, withAll: boolean): HTMLSelectElement {
  const shown = onScreen();
  const terms = shown?.init.model.terms ?? [];
  const allowed = ABLATION_PRESETS.filter((p) => {
    if (p === 'all') return withAll;
    if (p === 'no-c2p') return terms.includes('c2p');
    if (p === 'no-p2c') return terms.includes('p2c');
    return true;
  });
  const sel = el(
    'select',
    { id, 'aria-label': 'Ablation preset' },
    allowed.map((p) => el('option', { value: p }, [PRESET_LABELS[p]])),
  );
  const cur = shown?.state.preset ?? (withAll ? 'all' : 'content-only');
  sel.value = allowed.includes(cur) ? cur : (allowed[withAll ? 0 : 1] ?? allowed[0] ?? cur);
  sel.addEventListener('change', () => update({ preset: sel.value as AblationPresetName }));
  return sel;
}
