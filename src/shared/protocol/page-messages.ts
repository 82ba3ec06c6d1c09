// The messages every webview page of the extension sends, whatever its panel: `ready` once loaded (with its
// protocol version) and `log` lines for the host's output channel.
import { isInt } from './checks';

export type ReadyMessage = { type: 'ready'; version: number };
export type LogMessage = { type: 'log'; level: 'info' | 'error'; message: string };

/** Validates `ready` and `log`; anything else or malformed gives undefined. */
export function parseReadyOrLog(m: Record<string, unknown>): ReadyMessage | LogMessage | undefined {
  if (m.type === 'ready') return isInt(m.version) ? { type: 'ready', version: m.version } : undefined;
  if (m.type === 'log') {
    return typeof m.message === 'string' && (m.level === 'info' || m.level === 'error')
      ? { type: 'log', level: m.level, message: m.message.slice(0, 2000) }
      : undefined;
  }
  return undefined;
}
