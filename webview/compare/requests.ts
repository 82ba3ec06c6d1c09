// The matrices the compare panel asks the host for: one per side, again whenever that side's pickers move or a
// new pair arrives. An answer that is no longer wanted (a newer pair, or the pickers moved on) is dropped.
import { MessageHandler } from '../../src/shared/messaging/message-handler';
import {
  compareAsking,
  SIDES,
  type CompareInit,
  type CompareResponseMessage,
  type CompareSliceRequest,
  type Side,
} from '../../src/shared/protocol/compare';
import { fromBuffer } from '../../src/shared/protocol/matrix-buffer';
import { logError } from '../common/error-line';
import { host } from './host';
import { failed, received } from './state/actions';
import { $pair, $picks } from './state/store';

export class SliceRequests {
  /** Numbers the requests and settles each with the host's reply to it. */
  private readonly messages = new MessageHandler({ post: host.post, asks: compareAsking });
  /** What each side last asked for, for which pair. */
  private asked: { pair?: CompareInit } & Partial<Record<Side, string>> = {};

  constructor() {
    $picks.listen(() => this.follow());
  }

  /** A new pair: what is in flight for the old one is let go. */
  reset(): void {
    this.messages.rejectAll('replaced');
    this.asked = {};
  }

  receive(m: CompareResponseMessage): void {
    if (m.pairId !== $pair.get()?.pairId) return;
    this.messages.receive(m);
  }

  private follow(): void {
    const pair = $pair.get();
    const picks = $picks.get();
    if (!pair || !picks) return;
    if (this.asked.pair !== pair) this.asked = { pair };
    for (const side of SIDES) {
      const key = JSON.stringify(picks[side]);
      if (this.asked[side] === key) continue;
      this.asked[side] = key;
      void this.load(pair, side, picks[side]);
    }
  }

  private async load(pair: CompareInit, side: Side, req: CompareSliceRequest): Promise<void> {
    const reply = this.messages.request(req, { pairId: pair.pairId, side });
    try {
      const r = await reply;
      // A newer pair, or the pickers moved on while this was computed: the later answer paints.
      if ($pair.get()?.pairId !== pair.pairId || JSON.stringify($picks.get()?.[side]) !== JSON.stringify(req)) return;
      received(side, { values: fromBuffer(r.data, r.n * r.n), n: r.n, ...req });
    } catch (e) {
      if ($pair.get()?.pairId !== pair.pairId) return; // a newer pair replaced this one
      failed(side, logError(e, host.post, `side ${side}: `));
    }
  }
}
