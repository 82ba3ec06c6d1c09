// The panel's global keys ([ ] layers, , . heads, 1–5 terms, h/g views, Esc), unless the reader is typing into
// a control that uses the key itself.
import { keyToAction } from '../state/nav';
import { act } from '../state/actions';
import { $kinds } from '../state/selectors';
import { $viewState } from '../state/store';

export function listenForShortcuts(): void {
  document.addEventListener('keydown', (e) => {
    if (!$viewState.get() || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target instanceof HTMLSelectElement && e.key.length === 1 && !'[],.'.includes(e.key)) return;
    const a = keyToAction(e.key, $kinds.get());
    if (!a) return;
    e.preventDefault();
    act(a);
  });
}
