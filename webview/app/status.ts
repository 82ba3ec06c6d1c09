// The panel's error line: what went wrong, in words, and the same line in the extension's log.
import { $ } from '../dom';
import { post } from './host';

export function reportError(e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  if (message === 'this result has been replaced' || message === 'superseded') return;
  $('#status').textContent = message;
  post({ type: 'log', level: 'error', message });
}

export function clearStatus(): void {
  $('#status').textContent = '';
}
