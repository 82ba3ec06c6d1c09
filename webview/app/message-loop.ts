// Messages from the extension host: a result to show (or none), answers to the panel's requests, the editor's
// cursor, the host's own commands (show a view, export), predictions and runs.
import type { HostToWebview } from '../../src/shared/protocol';
import { $, el } from '../dom';
import { receiveRun } from '../run-channel';
import { update } from '../state/actions';
import { $hover, $init, $merged, $viewState } from '../state/store';
import { openResult, type Panel } from './open-result';

export function listenToHost(panel: Panel): void {
  window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
    const m = event.data;
    const init = $init.get();
    switch (m.type) {
      case 'init':
        openResult(m.init, panel);
        return;
      case 'empty': {
        $init.set(undefined);
        const app = $('#app');
        app.dataset.state = 'empty';
        app.replaceChildren(el('p', { id: 'empty', class: 'empty' }, [m.message]));
        return;
      }
      case 'response':
        if (!init || m.resultId !== init.resultId) return;
        if (m.ok) panel.requests.settle(m.id, true, m.body);
        else panel.requests.settle(m.id, false, undefined, m.error);
        return;
      case 'focus': {
        // The editor's cursor moved onto a piece: it becomes the hover unless a token is pinned.
        if (!init || m.resultId !== init.resultId || $viewState.get()?.pinned !== null) return;
        const merged = $merged.get();
        const i = m.i !== null && merged ? merged.findIndex((g) => g.pieces.includes(m.i!)) : m.i;
        const row = i === -1 ? null : i;
        $hover.set({ i: row, j: null, fromStrip: false });
        if (row !== null) panel.strip.reveal(row);
        return;
      }
      case 'show':
        update({ view: m.view });
        return;
      case 'exportImage':
        panel.exporter.send(m.format, m.requestId);
        return;
      case 'fillMask':
      case 'tokenPrediction':
        panel.predictions.receive(m);
        return;
      case 'runProgress':
      case 'runResult':
        receiveRun(m);
        return;
    }
  });
}
