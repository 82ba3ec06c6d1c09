// The panel's error line: what went wrong, in words, and the same line in the extension's log.
import { $ } from '../../common/dom';
import { errorText, showError } from '../../common/error-line';
import { post } from './host';

export function reportError(e: unknown): void {
  const message = errorText(e);
  if (message === 'this result has been replaced' || message === 'superseded') return;
  showError($('#status'), e, post);
}

export function clearStatus(): void {
  $('#status').textContent = '';
}
