// The toolbar's "More" button: shows or folds away the controls a reader rarely changes (special tokens, word
// merging, colours, export, compare models), so the map gets the panel's height. Open or closed is remembered
// while the panel lives and in the state VS Code keeps for it.
import { $, el } from '../../common/dom';
import { saveUiFlags, savedState } from './host';

let open: boolean | undefined;

function isOpen(): boolean {
  if (open === undefined) open = (savedState() as { moreOpen?: unknown } | undefined)?.moreOpen === true;
  return open;
}

function show(button: HTMLElement): void {
  button.setAttribute('aria-expanded', String(isOpen()));
  button.textContent = isOpen() ? 'Less ‹' : 'More ›';
  const group = document.getElementById('more-controls');
  if (group) group.hidden = !isOpen();
}

/** The button; the group it folds (#more-controls) is placed by the shell right after it. */
export function moreToggle(): HTMLButtonElement {
  const b = el(
    'button',
    {
      id: 'more-toggle',
      type: 'button',
      'aria-controls': 'more-controls',
      title: 'More controls: special tokens, merge into words, colours, export, compare models',
    },
    [],
  );
  b.addEventListener('click', () => {
    open = !isOpen();
    saveUiFlags({ moreOpen: open });
    show(b);
  });
  return b;
}

/** Shows the remembered state once the shell is in the page. */
export function syncMoreToggle(): void {
  const b = document.getElementById('more-toggle');
  if (b) show(b);
}

/** Opens the group (a shortcut or a message that needs one of its controls). */
export function openMore(): void {
  if (isOpen()) return;
  open = true;
  saveUiFlags({ moreOpen: true });
  show($('#more-toggle'));
}
