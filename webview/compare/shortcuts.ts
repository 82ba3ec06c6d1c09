// The compare panel's one key: Escape releases a pin.
import { unpin } from './state/actions';
import { $pinned } from './state/store';

export function listenForEscape(): void {
  window.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && $pinned.get()) unpin();
  });
}
