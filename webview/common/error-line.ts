// What went wrong, in words, on a page's status line, and the same line in the extension's log.
import type { LogMessage } from '../../src/shared/protocol/lens';

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Puts the error in the extension's log, `context` first (which part of the page failed); returns the message. */
export function logError(e: unknown, post: (m: LogMessage) => void, context = ''): string {
  const message = errorText(e);
  post({ type: 'log', level: 'error', message: `${context}${message}` });
  return message;
}

export function showError(line: HTMLElement, e: unknown, post: (m: LogMessage) => void): void {
  line.textContent = logError(e, post);
}
