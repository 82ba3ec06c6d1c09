// Messages from the extension host, for either panel: one handler per message type, and the page the host asks
// for when there is nothing to show.
import { $, el } from './dom';

export type HostHandlers<M extends { type: string }> = { [K in M['type']]: (m: Extract<M, { type: K }>) => void };

export function listenForHost<M extends { type: string }>(handlers: HostHandlers<M>): void {
  window.addEventListener('message', (event: MessageEvent<M>) => {
    const m = event.data;
    if (!m || typeof m !== 'object' || !Object.hasOwn(handlers, m.type)) return;
    (handlers[m.type as M['type']] as (m: M) => void)(m);
  });
}

/** The host has nothing to show: one line saying why, in place of the page. */
export function showEmpty(message: string): void {
  const app = $('#app');
  app.dataset.state = 'empty';
  app.replaceChildren(el('p', { id: 'empty', class: 'empty' }, [message]));
}

/**
 * The host's last run failed or was refused (`message`), or succeeded again (null). What the page shows is kept but
 * marked, so it is never taken for the answer to the run that failed: a banner names the failure and the rest is dimmed.
 */
export function markStale(message: string | null, failed: string, kept: string): void {
  const app = $('#app');
  document.getElementById('stale')?.remove();
  if (message === null) {
    delete app.dataset.stale;
    return;
  }
  const hasContent = app.dataset.state === 'ready';
  if (hasContent) app.dataset.stale = 'true';
  app.prepend(
    el('div', { id: 'stale', class: 'stale', role: 'alert' }, [
      el('strong', {}, [`${failed}: `]),
      message,
      ...(hasContent ? [el('span', { class: 'stale-kept' }, [` ${kept}`])] : []),
    ]),
  );
}
