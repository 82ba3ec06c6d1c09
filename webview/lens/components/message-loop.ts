// Messages from the extension host: a result to show (or none), answers to the panel's requests, the editor's
// cursor, the host's own commands (show a view, export), predictions and runs.
import type { HostToWebview } from '../../../src/shared/protocol/lens';
import { listenForHost, markStale, showEmpty } from '../../common/host-messages';
import { receiveRun } from '../state/run-channel';
import { update } from '../state/actions';
import { $attribution, $decision, $hover, $init, $merged, $viewState } from '../state/store';
import { openResult, type Panel } from './open-result';

export function listenToHost(panel: Panel): void {
  listenForHost<HostToWebview>({
    init: (m) => {
      markStale(null, '', '');
      openResult(m.init, panel);
    },
    empty: (m) => {
      $init.set(undefined);
      showEmpty(m.message);
    },
    stale: (m) => markStale(m.message, 'Last explain failed', 'Below: the previous result, not the text just asked for.'),
    response: (m) => {
      const init = $init.get();
      if (!init || m.resultId !== init.resultId) return;
      panel.requests.receive(m);
    },
    focus: (m) => {
      // The editor's cursor moved onto a piece: it becomes the hover unless a token is pinned.
      const init = $init.get();
      if (!init || m.resultId !== init.resultId || $viewState.get()?.pinned !== null) return;
      const merged = $merged.get();
      const i = m.i !== null && merged ? merged.findIndex((g) => g.pieces.includes(m.i!)) : m.i;
      const row = i === -1 ? null : i;
      $hover.set({ i: row, j: null, fromStrip: false });
      if (row !== null) panel.strip.reveal(row);
    },
    show: (m) => update({ view: m.view }),
    exportImage: (m) => panel.exporter.send(m.format, m.requestId, { widthCm: m.widthCm, dpi: m.dpi }),
    fillMask: (m) => {
      if (m.resultId === $init.get()?.resultId && m.fillMask.state !== 'pending')
        $decision.set(m.fillMask.state === 'ready' ? m.fillMask.decision : undefined);
      panel.predictions.receive(m);
    },
    tokenPrediction: (m) => panel.predictions.receive(m),
    occlusion: (m) => {
      if (m.resultId !== $init.get()?.resultId) return;
      const st = $attribution.get();
      $attribution.set({ asked: st?.asked ?? 'this', method: st?.method ?? 'mask', attribution: m.attribution });
    },
    runProgress: (m) => receiveRun(m),
    runResult: (m) => receiveRun(m),
  });
}
